/**
 * Every operation the thread that owns the database runs (worker.ts), by name: each is
 * synchronous, bounded (by its caller's batch size or an explicit limit) and runs inside one
 * savepoint of a group commit. store-functions.ts, on the server's thread, calls them by
 * name through the channel (channel.ts).
 */
import { brokerHeartbeat, brokerLeave, brokerList } from "./broker-registry.js";
import { jobDeleteFinished, jobDeleteIds, jobRetryFailedChunk } from "./bulk-admin.js";
import { jobClaimMany, jobNextDueAt, jobReleaseBuffered, jobStartMany } from "./hand-out.js";
import { jobInsertMany } from "./insert-jobs.js";
import { jobCountByState, jobGetMany, jobPeekMany, walkChunk } from "./job-reads.js";
import { leaseAcquire, leaseRelease } from "./leases.js";
import {
  queueCreate,
  queueDeleteBegin,
  queueDeleteCancel,
  queueDeleteEnd,
  queueDeleteJobs,
  queueGet,
  queueList,
  queueStats,
  queueUpdate,
} from "./queue-admin.js";
import { jobCheckpointMany, jobClaimExpire, jobCompleteMany, jobFailMany } from "./running-writes.js";

export const ops = {
  brokerHeartbeat,
  brokerLeave,
  brokerList,
  jobCheckpointMany,
  jobClaimExpire,
  jobClaimMany,
  jobCompleteMany,
  jobCountByState,
  jobDeleteFinished,
  jobDeleteIds,
  jobFailMany,
  jobGetMany,
  jobInsertMany,
  jobNextDueAt,
  jobPeekMany,
  jobReleaseBuffered,
  jobRetryFailedChunk,
  jobStartMany,
  leaseAcquire,
  leaseRelease,
  queueCreate,
  queueDeleteBegin,
  queueDeleteCancel,
  queueDeleteEnd,
  queueDeleteJobs,
  queueGet,
  queueList,
  queueStats,
  queueUpdate,
  walkChunk,
};

export type Ops = typeof ops;
export type OpName = keyof Ops;
/** An operation's parameters, as they cross to the database's thread. */
export type OpParams<K extends OpName> = Parameters<Ops[K]>[1];
export type OpResult<K extends OpName> = ReturnType<Ops[K]>;
