/**
 * Which jobs a scan, count or delete is about, and the one rule that decides whether a
 * job matches. Stores that filter in their own query language (Redis scripts, SQL)
 * apply the same rule there and call matchesBody for the part they cannot (the regex).
 */
import type { JobRecord } from "./job-record.js";
import { visibleState } from "./transitions.js";

/**
 * A compiled body pattern. Requests compile theirs with a linear-time engine (RE2 syntax,
 * engine/request-checks.ts): a backtracking RegExp would let one request stall the server.
 */
export interface BodyPattern {
  /** Whether the pattern matches anywhere in `text`. */
  test(text: string): boolean;
}

/** Filters shared by scan, count and delete. Unset fields match everything. */
export interface JobFilter {
  state?: "pending" | "running" | "succeeded" | "failed";
  priority?: number;
  /** true: run_after > now; false: run_after ≤ now. */
  future?: boolean;
  bodyRegex?: BodyPattern;
}

/** Where a scan resumes: after this (run_after, id) in scan order. */
export interface ScanCursor {
  runAfter: number;
  id: string;
}

export function matchesFilter(job: JobRecord, filter: JobFilter, now: number): boolean {
  if (filter.state !== undefined && visibleState(job.state) !== filter.state) return false;
  if (filter.priority !== undefined && job.priority !== filter.priority) return false;
  if (filter.future !== undefined && job.runAfter > now !== filter.future) return false;
  return matchesBody(job, filter);
}

export function matchesBody(job: JobRecord, filter: JobFilter): boolean {
  return !filter.bodyRegex || filter.bodyRegex.test(Buffer.from(job.body).toString("utf8"));
}
