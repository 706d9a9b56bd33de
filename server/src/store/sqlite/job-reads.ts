/**
 * Reads of jobs on SQLite: lookup by id, the dry-run peek (each partition's best due jobs per
 * priority, buffered ones included), and walkChunk: one bounded piece of a walk over a
 * queue's jobs in scan order (jobs_scan), which scan, count and DeleteJobs repeat
 * (store-functions.ts) so that no statement reads more than a chunk. Held jobs read as
 * buffered (held-jobs.ts), as the memory store shows them.
 */
import { type JobFilter, matchesFilter, type ScanCursor } from "../../domain/job-filter.js";
import { compareForDequeue, type JobRecord } from "../../domain/job-record.js";
import type { SqliteContext } from "./context.js";
import { JOB_COLUMNS, type JobRow, META_AND_SIZE, toRecord } from "./rows.js";

export function jobGetMany(ctx: SqliteContext, p: { ids: string[]; bodies?: boolean }): Array<JobRecord | undefined> {
  const sql = `SELECT ${p.bodies === false ? META_AND_SIZE : JOB_COLUMNS} FROM jobs WHERE id = ?`;
  return p.ids.map((id) => {
    const row = ctx.get<JobRow>(sql, id);
    return row && !ctx.deleting.has(row.queue) ? ctx.held.overlay(toRecord(row)) : undefined;
  });
}

export function jobPeekMany(ctx: SqliteContext, p: { queue: string; limit: number; now: number }): JobRecord[] {
  const config = ctx.config(p.queue);
  if (!config) return [];
  const found: JobRecord[] = [];
  for (let part = 0; part < config.partitions; part++) {
    // Held (buffered) jobs are pending in their rows: read past them to find `limit` others.
    const held = ctx.held.inPartition(p.queue, part).size;
    for (let priority = 1; priority <= config.priorities; priority++) {
      const rows = ctx.all<JobRow>(
        `SELECT ${JOB_COLUMNS} FROM jobs WHERE queue = ? AND part = ? AND state = 'pending' AND priority = ? ` +
          "AND run_after <= ? ORDER BY run_after, seq LIMIT ?",
        p.queue,
        part,
        priority,
        p.now,
        p.limit + held,
      );
      for (const row of rows) found.push(ctx.held.overlay(toRecord(row)));
    }
  }
  return found.sort(compareForDequeue).slice(0, p.limit);
}

/** One bounded piece of a walk over a queue's jobs in scan order. */
export interface WalkChunk {
  /** The jobs that matched: none in "count" mode, records without bodies in "meta" mode, whole in "full". */
  jobs: JobRecord[];
  matched: number;
  /** Where the next chunk starts; undefined once the queue's last job has been looked at. */
  cursor?: ScanCursor;
}

/**
 * Looks at up to `examine` jobs of `queue` after `cursor` in scan order (newest run_after
 * first, ties by id descending) and returns those matching `filter`, which has no body
 * regex (the caller tests that on the bodies "full" mode returns).
 */
export function walkChunk(
  ctx: SqliteContext,
  p: {
    queue: string;
    filter: Omit<JobFilter, "bodyRegex">;
    cursor?: ScanCursor;
    examine: number;
    mode: "count" | "meta" | "full";
    now: number;
  },
): WalkChunk {
  if (!ctx.queue(p.queue)) return { jobs: [], matched: 0 };
  const head = "SELECT seq, id, state, priority, run_after FROM jobs WHERE queue = ?";
  const order = "ORDER BY run_after DESC, id DESC LIMIT ?";
  const rows = p.cursor
    ? ctx.all<JobRow>(
        `${head} AND (run_after, id) < (?, ?) ${order}`,
        p.queue,
        p.cursor.runAfter,
        p.cursor.id,
        p.examine,
      )
    : ctx.all<JobRow>(`${head} ${order}`, p.queue, p.examine);
  // A filter without a regex reads state, priority and run_after: the columns read above.
  const hits = rows.filter((row) => matchesFilter(toRecord(row), p.filter, p.now));
  const last = rows[rows.length - 1];
  const cursor = rows.length < p.examine || !last ? undefined : { runAfter: last.run_after, id: last.id };
  if (p.mode === "count") return { jobs: [], matched: hits.length, cursor };
  const sql = `SELECT ${p.mode === "meta" ? META_AND_SIZE : JOB_COLUMNS} FROM jobs WHERE seq = ?`;
  const jobs = hits.map((hit) => ctx.held.overlay(toRecord(ctx.get<JobRow>(sql, hit.seq)!)));
  return { jobs, matched: jobs.length, cursor };
}
