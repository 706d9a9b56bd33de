/**
 * The primitives every job change goes through, as MemoryState.apply and remove are for
 * the memory store: a transition's patch written to the row, the queue's counts moved, and
 * a job that ends (or is deleted before it ended) leaving its ordering key's sequence,
 * which promotes the key's next job in the same transaction.
 *
 * Ordering keys: a keyed job that has not ended has a key_pos, its place in the key's
 * sequence (jobs_key index); the first is the head, the only one not waiting.
 */
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { SqliteContext } from "./context.js";
import { JOB_COLUMNS, type JobRow, META_COLUMNS, toRecord, writePatch } from "./rows.js";

/** A job by id, or undefined (also for a job of a queue being deleted: it is gone for everyone else). */
export function loadJob(ctx: SqliteContext, id: string): JobRecord | undefined {
  const row = ctx.get<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ?`, id);
  return row && !ctx.deleting.has(row.queue) ? toRecord(row) : undefined;
}

/**
 * Applies a transition's patch to `job` (as it is stored). Returns the key's next job when
 * this one ended and so let it go (promoted from waiting to pending), for announcements.
 */
export function applyPatch(ctx: SqliteContext, job: JobRecord, patch: transitions.JobPatch): JobRecord | undefined {
  const after = patch.state ?? job.state;
  const leaves = inSequence(job) && transitions.isTerminal(after);
  writePatch(ctx, job.seq, patch, leaves);
  ctx.count(job.queue, job.state, after);
  // Every patch that ends a job sets updatedAt: the transition's time is the promotion's.
  return leaves ? promoteHead(ctx, job, patch.updatedAt ?? job.updatedAt) : undefined;
}

/** Deletes a job; one that had not ended lets the next job of its ordering key go. */
export function removeJob(ctx: SqliteContext, job: JobRecord, now: number): void {
  ctx.run("DELETE FROM jobs WHERE seq = ?", job.seq);
  ctx.count(job.queue, job.state, undefined);
  if (inSequence(job)) promoteHead(ctx, job, now);
}

/** Whether a job of ordering key `key` has not ended yet in the partition (then a newcomer waits behind it). */
export function keyBusy(ctx: SqliteContext, queue: string, partition: number, key: string): boolean {
  return (
    ctx.get(
      "SELECT 1 FROM jobs WHERE queue = ? AND part = ? AND ordering_key = ? AND key_pos IS NOT NULL LIMIT 1",
      queue,
      partition,
      key,
    ) !== undefined
  );
}

/** A keyed job that has not ended is in its key's sequence. */
function inSequence(job: JobRecord): boolean {
  return job.orderingKey !== "" && !transitions.isTerminal(job.state);
}

/** After `left` left its key's sequence: the new head, promoted if it was waiting (and then returned). */
function promoteHead(ctx: SqliteContext, left: JobRecord, now: number): JobRecord | undefined {
  const row = ctx.get<JobRow>(
    `SELECT ${META_COLUMNS} FROM jobs WHERE queue = ? AND part = ? AND ordering_key = ? AND key_pos IS NOT NULL ORDER BY key_pos LIMIT 1`,
    left.queue,
    left.partition,
    left.orderingKey,
  );
  if (row?.state !== "waiting") return undefined;
  const head = toRecord(row);
  const patch = transitions.promote(now);
  applyPatch(ctx, head, patch);
  return { ...head, ...patch };
}
