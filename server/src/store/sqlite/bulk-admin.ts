/**
 * Bulk admin on SQLite, each call bounded (store-functions.ts repeats them): retention GC
 * (jobs_finished, oldest first), the deletes DeleteJobs asked for (by id, each job checked
 * again against the filter in the step that deletes it) and RetryFailedJobs (failed jobs,
 * oldest failure first, a chunk at a time). A deleted job that had not ended, and a retried
 * one with an ordering key, keep their key's sequence whole (job-writes.ts; a retry rejoins
 * at the tail).
 */
import { type JobFilter, matchesFilter } from "../../domain/job-filter.js";
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { SqliteContext } from "./context.js";
import { releaseFreePages } from "./free-pages.js";
import { applyPatch, keyBusy, loadJobs, removeJobs } from "./job-writes.js";
import { type JobRow, META_COLUMNS, toRecord } from "./rows.js";

export function jobDeleteFinished(
  ctx: SqliteContext,
  p: { queue: string; succeededBefore: number; failedBefore: number; limit: number },
): number {
  let deleted = 0;
  for (const [state, before] of [
    ["succeeded", p.succeededBefore],
    ["failed", p.failedBefore],
  ] as const) {
    if (deleted >= p.limit) break;
    // `state IN (…)` repeats jobs_finished's WHERE: SQLite uses a partial index only for a query that says it.
    const gone = ctx.run(
      "DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE queue = ? AND state IN ('succeeded', 'failed') " +
        "AND state = ? AND finished_at < ? ORDER BY finished_at, seq LIMIT ?)",
      p.queue,
      state,
      before,
      p.limit - deleted,
    );
    ctx.count(p.queue, state, undefined, gone);
    deleted += gone;
  }
  if (deleted > 0) releaseFreePages(ctx);
  return deleted;
}

/** A job a walk found, and (with a body regex) the updatedAt its body was tested at. */
export interface DeleteCandidate {
  id: string;
  updatedAt?: number;
}

/**
 * Deletes the candidates that still match `filter` (its body regex was tested by the caller:
 * a candidate given with updatedAt is deleted only if the job has not changed since).
 */
export function jobDeleteIds(
  ctx: SqliteContext,
  p: { queue: string; filter: JobFilter; candidates: DeleteCandidate[]; now: number },
): number {
  const jobs = loadJobs(
    ctx,
    p.candidates.map((c) => c.id),
  );
  const doomed = p.candidates.flatMap((c) => {
    const job = jobs.get(c.id);
    jobs.delete(c.id); // named twice: deleted once
    if (!job || job.queue !== p.queue || !matchesFilter(job, p.filter, p.now)) return [];
    return c.updatedAt !== undefined && job.updatedAt !== c.updatedAt ? [] : [job];
  });
  removeJobs(ctx, doomed, p.now);
  if (doomed.length > 0) releaseFreePages(ctx);
  return doomed.length;
}

/**
 * Retries up to `limit` failed jobs (of `priority`, if given), oldest failure first, looking
 * at no more than `examine` failed jobs past `after`. Returns where the next chunk starts,
 * or no `after` when every failed job has been looked at or `limit` was reached.
 */
export function jobRetryFailedChunk(
  ctx: SqliteContext,
  p: {
    queue: string;
    priority?: number;
    attemptsAllowed: number;
    runAfter: number;
    limit: number;
    examine: number;
    after?: RetryCursor;
    now: number;
  },
): { retried: number; after?: RetryCursor } {
  const from = p.after ?? { finishedAt: -1, seq: 0 };
  const rows = ctx.all<JobRow>(
    `SELECT ${META_COLUMNS} FROM jobs WHERE queue = ? AND state IN ('succeeded', 'failed') AND state = 'failed' ` +
      "AND (finished_at, seq) > (?, ?) ORDER BY finished_at, seq LIMIT ?",
    p.queue,
    from.finishedAt,
    from.seq,
    p.examine,
  );
  let retried = 0;
  for (const job of rows.map(toRecord)) {
    if (p.priority !== undefined && job.priority !== p.priority) continue;
    if (retried >= p.limit) return { retried };
    retry(ctx, job, p);
    retried++;
  }
  const last = rows[rows.length - 1];
  return {
    retried,
    after: rows.length < p.examine || !last ? undefined : { finishedAt: last.finished_at, seq: last.seq },
  };
}

/** Where a RetryFailedJobs walk over a queue's failed jobs goes on: after this (finished_at, seq). */
export interface RetryCursor {
  finishedAt: number;
  seq: number;
}

/** A failed job gets fresh attempts; one with an ordering key rejoins its key's sequence at the tail. */
function retry(
  ctx: SqliteContext,
  job: JobRecord,
  p: { attemptsAllowed: number; runAfter: number; now: number },
): void {
  const keyed = job.orderingKey !== "";
  const busy = keyed && keyBusy(ctx, job.queue, job.partition, job.orderingKey);
  applyPatch(ctx, job, transitions.retryFailed(p.attemptsAllowed, p.runAfter, p.now, busy));
  if (keyed) ctx.run("UPDATE jobs SET key_pos = ? WHERE seq = ?", ctx.nextSeq(), job.seq);
}
