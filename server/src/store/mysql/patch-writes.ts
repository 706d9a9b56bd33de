/**
 * How decided transitions reach the rows, for the writes on running and buffered jobs
 * (running-writes.ts, hand-out.ts): the exact path writes the patches of a locked batch
 * with one UPDATE (applyPatches); a fast path writes one UPDATE per group of jobs that
 * share their patch, without reading them, and is kept only if it matched every row
 * (wholeOrNothing), else rolled back so the exact path decides.
 */
import type { JobRecord } from "../../domain/job-record.js";
import type { JobPatch } from "../../domain/transitions.js";
import { patchManyStatement } from "./rows.js";
import { type Conn, type Param, run, type Shard } from "./shard.js";

/** Writes each job's patch with one UPDATE and returns the jobs as they now are. */
export async function applyPatches(
  c: Conn,
  changes: Array<{ job: JobRecord; patch: JobPatch }>,
  fence = { sql: "state = 'running'", params: [] as Param[] },
): Promise<JobRecord[]> {
  if (changes.length === 0) return [];
  const statement = patchManyStatement(
    changes.map((ch) => ({ id: ch.job.id, patch: ch.patch })),
    fence,
  );
  await run(c, statement.sql, statement.params);
  return changes.map((ch) => ({ ...ch.job, ...ch.patch }));
}

/** A fast path matched fewer rows than it was given: its transaction is rolled back and the exact path runs. */
export class NotWhole extends Error {}

/** Runs a fast path in one transaction; undefined (rolled back, nothing written) when it threw NotWhole. */
export async function wholeOrNothing<T>(shard: Shard, work: (c: Conn) => Promise<T>): Promise<T | undefined> {
  try {
    return await shard.transaction(work);
  } catch (err) {
    if (err instanceof NotWhole) return undefined;
    throw err;
  }
}

/** The fields transitions that do not depend on the job read from it (attempt counters move in SQL, see sql.startGroup). */
export const NO_JOB = { attempt: 0, attemptsRemaining: 0, customStatus: "" } as JobRecord;
