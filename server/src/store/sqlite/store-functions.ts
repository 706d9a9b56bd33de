/**
 * The SQLite store's methods on the server's thread: most send one operation to the
 * database's thread (ops.ts, through channel.ts). Work that can touch any number of jobs
 * is sent as a series of bounded operations instead, so no statement holds the database
 * for long and other calls run between them: scan, count, DeleteJobs and RetryFailedJobs
 * walk a queue CHUNK jobs at a time, DeleteQueue deletes CHUNK jobs at a time. A body regex
 * is tested here, on the bodies a walk returns (a compiled pattern cannot cross threads).
 */
import { type JobFilter, matchesBody, type ScanCursor } from "../../domain/job-filter.js";
import { type JobRecord, withoutBody } from "../../domain/job-record.js";
import type { StoreFunctions } from "../delegating-store.js";
import type { Store } from "../store.js";
import type { DeleteCandidate, RetryCursor } from "./bulk-admin.js";
import type { SqliteChannel } from "./channel.js";
import type { WalkChunk } from "./job-reads.js";
import type { OpName, OpParams } from "./ops.js";

/** Jobs looked at (walks) or deleted (DeleteQueue) per operation. */
export const CHUNK = 1000;

export interface SqliteStoreContext {
  readonly channel: SqliteChannel;
  /** DeleteQueue runs in progress, by queue: a CreateQueue of the same name waits for it. */
  readonly deletions: Map<string, Promise<boolean>>;
}

type P<K extends keyof Store> = Store[K] extends (p: infer A) => unknown ? A : never;

/** The Store methods that are one operation of the same name (ops.ts): they just send it. */
const ONE_OPERATION = [
  "brokerHeartbeat",
  "brokerLeave",
  "brokerList",
  "leaseAcquire",
  "leaseRelease",
  "jobCheckpointMany",
  "jobClaimExpire",
  "jobClaimMany",
  "jobCompleteMany",
  "jobDeleteFinished",
  "jobFailMany",
  "jobGetMany",
  "jobInsertMany",
  "jobNextDueAt",
  "jobPeekMany",
  "jobReleaseBuffered",
  "jobStartMany",
  "queueGet",
  "queueList",
  "queueStats",
  "queueUpdate",
  "tokenDelete",
  "tokenGet",
  "tokenInsert",
  "tokenList",
] as const satisfies ReadonlyArray<OpName & keyof Store>;

type OneOperation = (typeof ONE_OPERATION)[number];

const sent = Object.fromEntries(
  ONE_OPERATION.map((op) => [op, (c: SqliteStoreContext, p: unknown) => c.channel.call(op, p as never)]),
) as unknown as Pick<StoreFunctions<SqliteStoreContext>, OneOperation>;

export const functions: StoreFunctions<SqliteStoreContext> = {
  ...sent,
  jobCount,
  jobDeleteMany,
  jobRetryFailed,
  jobScan,
  queueCreate: async (c, p) => {
    await c.deletions.get(p.name);
    return c.channel.call("queueCreate", p);
  },
  queueDelete,
};

/** The pieces of a walk over a queue's jobs in scan order after `cursor`, CHUNK looked at per operation (job-reads.ts). */
async function* walkChunks(
  c: SqliteStoreContext,
  p: Omit<OpParams<"walkChunk">, "examine">,
): AsyncGenerator<WalkChunk> {
  let cursor = p.cursor;
  do {
    const chunk = await c.channel.call("walkChunk", { ...p, cursor, examine: CHUNK });
    yield chunk;
    cursor = chunk.cursor;
  } while (cursor);
}

/**
 * The jobs of a queue matching `filter`, in scan order after `cursor`; `bodies` says whether
 * records come with their bodies (a body regex needs them, and is tested here). The caller
 * stops the walk by leaving its loop.
 */
async function* walk(
  c: SqliteStoreContext,
  p: { queue: string; filter: JobFilter; cursor?: ScanCursor; bodies: boolean; now: number },
): AsyncGenerator<JobRecord> {
  const { bodyRegex, ...filter } = p.filter;
  const mode = p.bodies || bodyRegex ? "full" : "meta";
  for await (const chunk of walkChunks(c, { queue: p.queue, filter, cursor: p.cursor, mode, now: p.now }))
    for (const job of chunk.jobs) if (matchesBody(job, p.filter)) yield job;
}

async function jobCount(c: SqliteStoreContext, p: P<"jobCount">): Promise<number> {
  const { state, priority, future, bodyRegex } = p.filter;
  if (priority === undefined && future === undefined && !bodyRegex)
    return c.channel.call("jobCountByState", { queue: p.queue, state });
  let n = 0;
  if (bodyRegex) for await (const _ of walk(c, { queue: p.queue, filter: p.filter, bodies: true, now: p.now })) n++;
  else
    for await (const chunk of walkChunks(c, {
      queue: p.queue,
      filter: { state, priority, future },
      mode: "count",
      now: p.now,
    }))
      n += chunk.matched;
  return n;
}

async function jobScan(c: SqliteStoreContext, p: P<"jobScan">): Promise<JobRecord[]> {
  const page: JobRecord[] = [];
  if (p.limit <= 0) return page;
  const bodies = p.bodies !== false;
  for await (const job of walk(c, { queue: p.queue, filter: p.filter, cursor: p.cursor, bodies, now: p.now })) {
    // Without bodies, a walk's records say their bodySize already, unless a regex needed the bodies.
    page.push(bodies || job.bodySize !== undefined ? job : withoutBody(job));
    if (page.length >= p.limit) break;
  }
  return page;
}

async function jobDeleteMany(c: SqliteStoreContext, p: P<"jobDeleteMany">): Promise<number> {
  const candidates: DeleteCandidate[] = [];
  if (p.limit > 0) {
    for await (const job of walk(c, { queue: p.queue, filter: p.filter, bodies: false, now: p.now })) {
      // A body tested here is deleted only if the job has not changed since (the database's thread re-checks the rest).
      candidates.push(p.filter.bodyRegex ? { id: job.id, updatedAt: job.updatedAt } : { id: job.id });
      if (candidates.length >= p.limit) break;
    }
  }
  const { bodyRegex: _, ...filter } = p.filter;
  let deleted = 0;
  for (let i = 0; i < candidates.length; i += CHUNK) {
    deleted += await c.channel.call("jobDeleteIds", {
      queue: p.queue,
      filter,
      candidates: candidates.slice(i, i + CHUNK),
      now: p.now,
    });
  }
  return deleted;
}

async function jobRetryFailed(c: SqliteStoreContext, p: P<"jobRetryFailed">): Promise<number> {
  if (p.limit <= 0) return 0;
  let retried = 0;
  let after: RetryCursor | undefined;
  do {
    const chunk = await c.channel.call("jobRetryFailedChunk", {
      ...p,
      limit: p.limit - retried,
      examine: CHUNK,
      after,
    });
    retried += chunk.retried;
    after = chunk.after;
  } while (after && retried < p.limit);
  return retried;
}

function queueDelete(c: SqliteStoreContext, p: P<"queueDelete">): Promise<boolean> {
  const run = (async () => {
    await c.deletions.get(p.name);
    if (!(await c.channel.call("queueDeleteBegin", p))) return false;
    try {
      while ((await c.channel.call("queueDeleteJobs", { name: p.name, limit: CHUNK })) === CHUNK);
      await c.channel.call("queueDeleteEnd", p);
    } catch (err) {
      // The queue stays, with the jobs not yet deleted, and can be deleted again.
      await c.channel.call("queueDeleteCancel", p).catch(() => {});
      throw err;
    }
    return true;
  })();
  const tracked = run.finally(() => {
    if (c.deletions.get(p.name) === tracked) c.deletions.delete(p.name);
  });
  c.deletions.set(p.name, tracked);
  return tracked;
}
