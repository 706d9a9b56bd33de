/**
 * The primitives every job change goes through, as MemoryState.apply and remove are for
 * the memory store: transitions' patches written to the rows, the queue's counts moved, and
 * a job that ends (or is deleted before it ended) leaving its ordering key's sequence,
 * which promotes the key's next job in the same transaction.
 *
 * Set-based: a batch's jobs are read with one statement (loadJobs) and written with one
 * UPDATE per run of equal patches (applyPatches), which a batch of one hand-out or of ACKs
 * without custom status is: the per-statement cost was most of a job's cost when each job
 * had its own SELECT and UPDATE.
 *
 * Ordering keys: a keyed job that has not ended has a key_pos, its place in the key's
 * sequence (jobs_key index); the first is the head, the only one not waiting.
 */
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { SqliteContext } from "./context.js";
import { type JobRow, META_COLUMNS, patchColumn, toRecord } from "./rows.js";

/** A batch's jobs by id, without their bodies (no transition reads one); jobs of a queue being deleted are gone. */
export function loadJobs(ctx: SqliteContext, ids: string[]): Map<string, JobRecord> {
  const found = new Map<string, JobRecord>();
  const rows = ctx.all<JobRow>(
    `SELECT ${META_COLUMNS} FROM jobs WHERE id IN (SELECT value FROM json_each(?))`,
    JSON.stringify(ids),
  );
  for (const row of rows) if (!ctx.deleting.has(row.queue)) found.set(row.id, toRecord(row));
  return found;
}

/** One job's change: the job as stored, and the transition's patch. */
export interface Change {
  job: JobRecord;
  patch: transitions.JobPatch;
}

/**
 * Applies each change's patch (in order: a job changed twice ends with its last patch).
 * Returns, per change, the key's next job when that change ended its job and so let it go
 * (promoted from waiting to pending), for announcements.
 */
export function applyPatches(ctx: SqliteContext, changes: Change[]): Array<JobRecord | undefined> {
  let group: { fields: string[]; values: unknown[]; leaves: boolean; seqs: number[] } | undefined;
  const flush = () => {
    if (!group) return;
    const sets = group.fields.map((f) => `${patchColumn(f)} = ?`);
    if (group.leaves) sets.push("key_pos = NULL");
    if (sets.length > 0)
      ctx.run(
        `UPDATE jobs SET ${sets.join(", ")} WHERE seq IN (SELECT value FROM json_each(?))`,
        ...(group.values as Array<string | number | Uint8Array>),
        JSON.stringify(group.seqs),
      );
    group = undefined;
  };
  const leaving: number[] = [];
  changes.forEach(({ job, patch }, i) => {
    const after = patch.state ?? job.state;
    const leaves = inSequence(job) && transitions.isTerminal(after);
    if (leaves) leaving.push(i);
    ctx.count(job.queue, job.state, after);
    // The fields that change: a run of jobs whose changes are equal is one UPDATE.
    const fields = (Object.keys(patch) as Array<keyof JobRecord>).filter((f) => patch[f] !== job[f]);
    const values = fields.map((f) => patch[f]);
    if (!group || group.leaves !== leaves || !sameChange(group.fields, group.values, fields, values)) {
      flush();
      group = { fields, values, leaves, seqs: [] };
    }
    group.seqs.push(job.seq);
  });
  flush();
  const promoted: Array<JobRecord | undefined> = changes.map(() => undefined);
  for (const i of leaving) {
    const { job, patch } = changes[i]!;
    // Every patch that ends a job sets updatedAt: the transition's time is the promotion's.
    promoted[i] = promoteHead(ctx, job, patch.updatedAt ?? job.updatedAt);
  }
  return promoted;
}

/** Applies one change; see applyPatches. */
export function applyPatch(ctx: SqliteContext, job: JobRecord, patch: transitions.JobPatch): JobRecord | undefined {
  return applyPatches(ctx, [{ job, patch }])[0];
}

function sameChange(fieldsA: string[], valuesA: unknown[], fieldsB: string[], valuesB: unknown[]): boolean {
  if (fieldsA.length !== fieldsB.length) return false;
  for (let i = 0; i < fieldsA.length; i++) {
    // A body is a new array each time: two are never the same change.
    if (fieldsA[i] !== fieldsB[i] || valuesA[i] !== valuesB[i] || valuesA[i] instanceof Uint8Array) return false;
  }
  return true;
}

/** Deletes jobs; one that had not ended lets the next job of its ordering key go. */
export function removeJobs(ctx: SqliteContext, jobs: JobRecord[], now: number): void {
  if (jobs.length === 0) return;
  ctx.run("DELETE FROM jobs WHERE seq IN (SELECT value FROM json_each(?))", JSON.stringify(jobs.map((j) => j.seq)));
  for (const job of jobs) {
    ctx.held.drop(job.id);
    ctx.count(job.queue, job.state, undefined);
  }
  for (const job of jobs) if (inSequence(job)) promoteHead(ctx, job, now);
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
