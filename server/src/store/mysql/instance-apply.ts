/**
 * One workflow step on MySQL (Store.workflows.instanceApply), inside one transaction on
 * the instances' shard (workflows.ts): checks first, which write nothing when they fail,
 * then the writes in the memory store's order (memory/workflows.ts).
 *
 * 1. The ACK's job row, locked (FOR UPDATE): it must hold the claim token and be a
 *    workflow job's run (transitions.checkClaim; else stale_claim or not_found).
 * 2. The instance's row, locked: its revision must be the one the step was decided on
 *    (0: no row), else a conflict the engine decides again.
 * 3. The new queue jobs, through the enqueue's own insert (insertOnShard, under a shared
 *    lock on their queues' rows: a queue deleted meanwhile is not_found, nothing written).
 * 4. The ACK's transition (transitions.succeed or fail) on the locked row, its WHERE
 *    repeating the claim fence; a job that ends leaves its ordering key's sequence,
 *    promoting the next (possibly a job step 3 queued behind it).
 * 5. The instance, written whole.
 * 6. The jobs to cancel, through DeleteJobs' delete (deleteWithKeys) where still pending,
 *    waiting or buffered, so the next job of their ordering key is promoted.
 */
import { parseJobId } from "../../domain/job-id.js";
import type { JobRecord, NewJob } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { OutcomeResult, WorkflowAck } from "../store.js";
import { deleteWithKeys } from "./bulk-admin.js";
import { insertOnShard } from "./insert-jobs.js";
import type { MysqlContext } from "./mysql-context.js";
import { leaveSequences } from "./ordering.js";
import { applyPatches } from "./patch-writes.js";
import * as sql from "./queries.js";
import { type JobRow, toRecord } from "./rows.js";
import { type Conn, type Param, run, select } from "./shard.js";

/** A queue job in these states may be cancelled: no worker has it, and it has not ended. */
const CANCELLABLE = { sql: "state IN ('pending', 'waiting', 'buffered')", params: [] as Param[] };

export async function applyStep(
  c: Conn,
  p: {
    id: string;
    rev: number;
    /** The instance's row (workflows.ts instanceParams), if the step writes one. */
    instance?: Param[];
    jobs: NewJob[];
    cancel: string[];
    ack?: WorkflowAck;
    now: number;
  },
  /** Takes the shared lock on the new jobs' queue rows (workflows.ts withQueuesLocked). */
  lock: () => Promise<void>,
): Promise<{ applied: boolean; ack?: OutcomeResult }> {
  let acked: JobRecord | undefined;
  if (p.ack) {
    // An id that names no partition names no job (and could not be compared with the ascii column).
    const [row] = parseJobId(p.ack.id) ? await select<JobRow>(c, sql.selectJobsMetaLocked(1), [p.ack.id]) : [];
    acked = row && toRecord(row);
    const outcome = transitions.checkClaim(acked, p.ack.claimToken);
    if (outcome !== "acknowledged" || acked?.workflow === undefined) {
      return { applied: false, ack: { outcome: outcome === "acknowledged" ? "not_found" : outcome } };
    }
  }
  const [stored] = await select<{ rev: number | string }>(c, sql.INSTANCE_REV_LOCK, [p.id]);
  if (Number(stored?.rev ?? 0) !== p.rev) return { applied: false };
  await lock();
  await insertOnShard(
    c,
    p.jobs.map((item, index) => ({ item, index })),
    p.now,
    false,
  );
  const ack = p.ack && acked && (await applyAck(c, acked, p.ack, p.now));
  if (p.instance) await run(c, sql.INSTANCE_UPSERT, p.instance);
  await cancelJobs(c, p.cancel, p.now);
  return { applied: true, ack };
}

/**
 * Deletes the jobs named (a step's or a schedule fire's cancels) through DeleteJobs' delete
 * where still pending, waiting or buffered, promoting the next job of their ordering keys.
 */
export async function cancelJobs(c: Conn, ids: string[], now: number): Promise<void> {
  const cancel = [...new Set(ids.filter((id) => parseJobId(id)))];
  if (cancel.length > 0) await deleteWithKeys(c, cancel, CANCELLABLE, now);
}

/** The ACK's transition on its locked row, fenced again by its claim token. */
async function applyAck(c: Conn, job: JobRecord, ack: WorkflowAck, now: number): Promise<OutcomeResult> {
  const patch =
    ack.kind === "complete" ? transitions.succeed(job, ack.customStatus, now) : transitions.fail(job, ack, now);
  const [after] = await applyPatches(c, [{ job, patch }], {
    sql: "state = 'running' AND claim_token = ?",
    params: [ack.claimToken],
  });
  const result: OutcomeResult = { outcome: "acknowledged" };
  if (after!.state === "pending") result.pendingAt = after!.runAfter;
  if (after!.orderingKey !== "" && transitions.isTerminal(after!.state)) {
    const promotedAt = (await leaveSequences(c, [after!], now)).get(after!.id);
    if (promotedAt !== undefined) result.promotedAt = promotedAt;
  }
  return result;
}

/**
 * After a step committed, what this process's claims must look at again (held-jobs.ts):
 * new jobs and a retried or promoting ACK may sit behind a claim's cursor; cancelled jobs
 * are no longer held, and one that headed its ordering key promoted the next.
 */
export function noteStep(
  ctx: MysqlContext,
  p: { jobs: NewJob[]; cancel: string[]; ackId?: string; ack?: OutcomeResult },
): void {
  if (ctx.held.empty) return;
  for (const job of p.jobs) ctx.held.get(job.queue, job.partition)?.note(job.priority, job.runAfter);
  if (p.ackId !== undefined && p.ack?.pendingAt !== undefined) ctx.held.noteQueued(p.ackId, undefined, p.ack.pendingAt);
  if (p.ackId !== undefined && p.ack?.promotedAt !== undefined)
    ctx.held.noteQueued(p.ackId, undefined, p.ack.promotedAt);
  ctx.held.forget(p.cancel);
  for (const queue of new Set(p.cancel.map((id) => parseJobId(id)?.queue))) if (queue) ctx.held.noteQueue(queue);
}
