/**
 * The admin calls' walk over one partition (scan, count, delete by filter): bounded
 * chunks of job_scan.lua, resumed from a (run_after, id) cursor, so no call holds Redis
 * for long and none loads a whole queue. The body regex runs here: JS regexes do not run
 * in Lua.
 */

import type { JobFilter, ScanCursor } from "../../domain/job-filter.js";
import type { JobRecord } from "../../domain/job-record.js";
import { decodeJobs, text } from "./codec.js";
import type { ScriptArg } from "./scripts.js";

/** Jobs examined per admin script call: bounds how long one call holds Redis. */
export const CHUNK = 1000;

const stateCodes = { pending: "p", running: "r", succeeded: "s", failed: "f" } as const;

/** Runs job_scan.lua on a partition (the store supplies keys and prefix). */
export type PartitionScript = (
  queue: string,
  partition: number,
  name: "job_scan",
  args: ScriptArg[],
) => Promise<unknown>;

/**
 * Walks one partition in scan order (run_after desc, id desc) after `cursor`, CHUNK
 * jobs per script call, handing each chunk's matches (without the body regex) to
 * `visit`; stops when `visit` returns false, `want` matches were seen, or the end.
 */
export interface WalkParams {
  queue: string;
  partition: number;
  filter: JobFilter;
  now: number;
  cursor?: ScanCursor;
  /** What each chunk returns: full records (bodies too), records without bodies, ids, or only the match count. */
  mode: "full" | "meta" | "ids" | "count";
  /** Matches wanted in all (Infinity: walk to the end unless `visit` stops). */
  want: number;
}

export async function walk(
  run: PartitionScript,
  { queue, partition, filter, now, cursor, mode, want }: WalkParams,
  visit: (matched: number, jobs: JobRecord[], ids: string[]) => boolean | Promise<boolean>,
): Promise<void> {
  if (want <= 0) return;
  let position: [string, string] = cursor ? [String(cursor.runAfter), cursor.id] : ["", ""];
  for (;;) {
    const args = [
      queue,
      partition,
      now,
      ...position,
      ...filterArgs(filter),
      CHUNK,
      Number.isFinite(want) ? Math.min(want, CHUNK) : CHUNK,
      mode,
    ];
    const [done, lastRa, lastId, matched, ...items] = (await run(queue, partition, "job_scan", args)) as [
      number,
      Buffer,
      Buffer,
      number,
      ...unknown[],
    ];
    position = [text(lastRa), text(lastId)];
    const jobs = mode === "full" || mode === "meta" ? decodeJobs(items, mode === "meta") : [];
    const ids = mode === "ids" ? items.map(text) : [];
    if (!(await visit(matched, jobs, ids)) || done) return;
  }
}

/** The filter as job_scan.lua and job_delete_ids.lua take it: state, priority, future. */
export function filterArgs(f: JobFilter): ScriptArg[] {
  return [f.state ? stateCodes[f.state] : "", f.priority ?? 0, f.future === undefined ? "" : f.future ? "1" : "0"];
}
