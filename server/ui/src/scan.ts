/**
 * One page of a queue's jobs with filters. ScanJobs filters by state, priority and body
 * (RE2) on the server; the dashboard adds two the API does not have yet: custom status
 * (contains) and a run_after time range, applied here to the jobs the server returns.
 * Such a page may take several ScanJobs calls, bounded by MAX_EXAMINED jobs; ScanJobs
 * returns newest run_after first, so a scan stops at the first job before the range.
 *
 * A page starts at a cursor: a server page token and how many jobs of that server page
 * were already shown. The server pages are deterministic for a token, so the dashboard
 * can resume in the middle of one (jobs that change state meanwhile may shift a page, as
 * with any live listing).
 */
import type { Job, JobState } from "@runlater/sdk/gen/job_pb.js";
import type { Api } from "./api.js";
import { timestampMs } from "./format.js";

export interface Filters {
  state: JobState;
  /** 0: every priority. */
  priority: number;
  /** Server-side RE2 over the body, ≤ 256 characters; "" for none. */
  bodyRegex: string;
  /** Client-side: custom status contains this (case-insensitive); "" for none. */
  customStatus: string;
  /** Client-side: run_after within [from, to] (epoch ms); undefined for open. */
  from?: number;
  to?: number;
}

export interface Cursor {
  token: string;
  skip: number;
}

export interface Page {
  jobs: Job[];
  /** Where the next page starts; undefined at the end. */
  next: Cursor | undefined;
  /** Jobs the server returned to fill this page. */
  examined: number;
  /** True when the page stopped short because MAX_EXAMINED jobs were looked at. */
  budgetSpent: boolean;
}

/** Jobs looked at for one page, at most: a rare filter over a big queue stops here and offers to go on. */
export const MAX_EXAMINED = 10_000;
/** Jobs asked of the server per call when filtering here. */
const BATCH = 500;

export function clientFiltered(f: Filters): boolean {
  return f.customStatus !== "" || f.from !== undefined || f.to !== undefined;
}

export async function scanPage(
  api: Api,
  queue: string,
  f: Filters,
  size: number,
  start: Cursor,
  signal?: AbortSignal,
): Promise<Page> {
  const local = clientFiltered(f);
  const batch = local ? BATCH : size;
  const needle = f.customStatus.toLowerCase();
  const jobs: Job[] = [];
  let cursor = start;
  let examined = 0;
  for (;;) {
    const res = await api.jobs.scanJobs(
      {
        queue,
        state: f.state,
        priority: f.priority,
        bodyRegex: f.bodyRegex,
        limit: batch,
        pageToken: cursor.token,
        includeBody: false,
      },
      { signal },
    );
    for (let i = cursor.skip; i < res.jobs.length; i++) {
      const job = res.jobs[i]!;
      examined++;
      const runAfter = timestampMs(job.runAfter) ?? 0;
      if (f.from !== undefined && runAfter < f.from) return { jobs, next: undefined, examined, budgetSpent: false };
      const keep =
        (f.to === undefined || runAfter <= f.to) && (needle === "" || job.customStatus.toLowerCase().includes(needle));
      if (keep) jobs.push(job);
      if (jobs.length === size) {
        const atEnd = i + 1 === res.jobs.length;
        const next = atEnd
          ? res.nextPageToken === ""
            ? undefined
            : { token: res.nextPageToken, skip: 0 }
          : { token: cursor.token, skip: i + 1 };
        return { jobs, next, examined, budgetSpent: false };
      }
    }
    if (res.nextPageToken === "") return { jobs, next: undefined, examined, budgetSpent: false };
    cursor = { token: res.nextPageToken, skip: 0 };
    if (examined >= MAX_EXAMINED) return { jobs, next: cursor, examined, budgetSpent: true };
  }
}
