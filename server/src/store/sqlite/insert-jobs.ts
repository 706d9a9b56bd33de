/**
 * Enqueue on SQLite: all or nothing (every queue is checked first, and the call is one
 * savepoint), idempotency keys resolved against live jobs (jobs_idempotency), and a job with
 * an ordering key joins its key's sequence at the tail, waiting behind a job of the key that
 * has not ended (an earlier job of the same batch included).
 */
import { queueNotFound } from "../../domain/errors.js";
import type { NewJob, StoredState } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { SqliteContext } from "./context.js";
import { keyBusy } from "./job-writes.js";

const INSERT =
  "INSERT INTO jobs (seq, id, queue, part, state, priority, run_after, attempts_allowed, attempts_remaining, attempt, " +
  "custom_status, created_at, updated_at, finished_at, claim_token, claim_expires_at, retry_delay_ms, " +
  "idempotency_key, ordering_key, key_pos, workflow, traceparent, body) " +
  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, 0, '', 0, 0, ?, ?, ?, ?, ?, ?)";

export function jobInsertMany(ctx: SqliteContext, p: { jobs: NewJob[]; now: number }): string[] {
  for (const job of p.jobs) if (!ctx.queue(job.queue)) throw queueNotFound(job.queue);
  return p.jobs.map((spec) => {
    if (spec.idempotencyKey !== "") {
      const live = ctx.get<{ id: string }>(
        "SELECT id FROM jobs WHERE queue = ? AND idempotency_key = ?",
        spec.queue,
        spec.idempotencyKey,
      );
      if (live) return live.id;
    }
    const seq = ctx.nextSeq();
    const keyed = spec.orderingKey !== "";
    const state: StoredState = keyed
      ? transitions.arrivalState(keyBusy(ctx, spec.queue, spec.partition, spec.orderingKey))
      : "pending";
    ctx.run(
      INSERT,
      seq,
      spec.id,
      spec.queue,
      spec.partition,
      state,
      spec.priority,
      spec.runAfter,
      spec.attemptsAllowed,
      spec.attemptsAllowed,
      spec.customStatus,
      spec.createdAt,
      p.now,
      spec.idempotencyKey === "" ? null : spec.idempotencyKey,
      keyed ? spec.orderingKey : null,
      keyed ? seq : null,
      spec.workflow ?? null,
      spec.traceparent ?? null,
      spec.body,
    );
    ctx.count(spec.queue, undefined, state);
    return spec.id;
  });
}
