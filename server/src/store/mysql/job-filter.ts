/**
 * JobFilter → WHERE clause for scan, count and delete.
 *
 * The body regex is NOT sent to the database: MySQL 8 (ICU) and MariaDB (PCRE) each have
 * their own dialect, neither is JavaScript's, and REGEXP on binary bodies differs again.
 * Instead the other filters run in SQL and the regex is applied here, in JavaScript, to
 * bounded pages of rows (PAGE rows at a time), so every store agrees on what matches
 * and no user text ever becomes SQL.
 */

import { type JobFilter, matchesFilter, type ScanCursor } from "../../domain/job-filter.js";
import type { JobRecord } from "../../domain/job-record.js";
import { ALL_COLUMNS, type JobRow, META_AND_SIZE, toRecord } from "./rows.js";
import { type Conn, type Param, select } from "./shard.js";

/** Rows read per round trip while a body regex filters in JavaScript. */
export const REGEX_PAGE = 500;

export function filterWhere(queue: string, filter: JobFilter, now: number): { sql: string; params: Param[] } {
  const parts = ["queue = ?"];
  const params: Param[] = [queue];
  // The generated columns of migration 0005 where they say the same: jobs_claim and
  // jobs_finished are keyed on them.
  if (filter.state === "pending") parts.push("queued_state <> 'none'");
  else if (filter.state === "succeeded" || filter.state === "failed") {
    parts.push("finished_state = ?");
    params.push(filter.state);
  } else if (filter.state !== undefined) {
    parts.push("state = ?");
    params.push(filter.state);
  }
  if (filter.priority !== undefined) {
    parts.push("priority = ?");
    params.push(filter.priority);
  }
  if (filter.future !== undefined) {
    parts.push(filter.future ? "run_after > ?" : "run_after <= ?");
    params.push(now);
  }
  return { sql: parts.join(" AND "), params };
}

/**
 * One page in scan order (newest run_after first, ties by id descending), strictly after
 * `cursor`; without `bodies`, the rows' bodies are not read (the records' are empty).
 */
export async function scanPage(
  c: Conn,
  queue: string,
  filter: JobFilter,
  limit: number,
  cursor: ScanCursor | undefined,
  now: number,
  bodies = true,
): Promise<JobRecord[]> {
  const where = filterWhere(queue, filter, now);
  let sql = `SELECT ${bodies ? ALL_COLUMNS : META_AND_SIZE} FROM jobs WHERE ${where.sql}`;
  const params = [...where.params];
  if (cursor) {
    sql += " AND (run_after < ? OR (run_after = ? AND id < ?))";
    params.push(cursor.runAfter, cursor.runAfter, cursor.id);
  }
  sql += " ORDER BY run_after DESC, id DESC LIMIT ?";
  params.push(limit);
  return (await select<JobRow>(c, sql, params)).map(toRecord);
}

/** Jobs matching `filter` including its body regex, in scan order, read REGEX_PAGE rows at a time. */
export async function* matchingJobs(
  c: Conn,
  queue: string,
  filter: JobFilter,
  now: number,
  cursor?: ScanCursor,
): AsyncGenerator<JobRecord> {
  const sqlFilter: JobFilter = { ...filter, bodyRegex: undefined };
  for (;;) {
    const page = await scanPage(c, queue, sqlFilter, REGEX_PAGE, cursor, now);
    for (const job of page) if (matchesFilter(job, filter, now)) yield job;
    const last = page[page.length - 1];
    if (!last || page.length < REGEX_PAGE) return;
    cursor = { runAfter: last.runAfter, id: last.id };
  }
}
