/**
 * The embedded default store: everything in this process's memory, lost on exit. It is
 * a real store, not a mock: it passes the same shared suite as Redis and MySQL.
 *
 * Indexes (all lazily cleaned: an index entry carries the job's generation and is
 * skipped once the job has changed since):
 * - per partition and priority, an OrderedIndex of pending jobs by (run_after, seq): O(1)
 *   for jobs enqueued in order, O(log n) for scheduled or retried ones; never a scan;
 * - one OrderedIndex of running claims by expiry, so the claim-timeout sweep costs O(expired);
 * - per queue, finished jobs in finishing order, so retention GC costs O(deleted);
 * - per partition and ordering key, the jobs that have not ended, in enqueue order
 *   (KeySequences): O(1) to join and to find the next head when one ends. Waiting jobs
 *   are in no pending heap, so claims and peeks never see them.
 * Scan, count and stats iterate the queue's jobs: admin calls, O(jobs in the queue).
 *
 * This class is the Store and only delegates, one module per concern, each given the
 * store's MemoryState (memory-state.ts, over the data of queue-data.ts): broker-registry.ts,
 * leases.ts, queue-admin.ts, insert-jobs.ts (enqueue), hand-out.ts (claim, start, release),
 * running-writes.ts (ACK, checkpoint, claim expiry), bulk-admin.ts (GC, delete, retry) and
 * job-reads.ts.
 */
import type { JobFilter, ScanCursor } from "../../domain/job-filter.js";
import type { JobRecord, NewJob } from "../../domain/job-record.js";
import type * as transitions from "../../domain/transitions.js";
import type { BrokerEntry, Lease, OutcomeResult, QueueRecord, QueueStatsRecord, Store } from "../store.js";
import * as brokers from "./broker-registry.js";
import * as bulk from "./bulk-admin.js";
import * as handOut from "./hand-out.js";
import * as insert from "./insert-jobs.js";
import * as reads from "./job-reads.js";
import * as leases from "./leases.js";
import { MemoryState } from "./memory-state.js";
import * as queues from "./queue-admin.js";
import * as running from "./running-writes.js";

export class MemoryStore implements Store {
  readonly name = "memory";
  readonly defaultBufferSize = 1000;
  /** The jobs, queues, leases and brokers, shared by the modules this class delegates to. */
  private readonly state = new MemoryState();

  // ---- broker registry

  brokerHeartbeat(p: { id: string; url: string; ttlMs: number; now: number }): Promise<void> {
    return brokers.brokerHeartbeat(this.state, p);
  }

  brokerList(p: { now: number }): Promise<BrokerEntry[]> {
    return brokers.brokerList(this.state, p);
  }

  brokerLeave(p: { id: string }): Promise<void> {
    return brokers.brokerLeave(this.state, p);
  }

  // ---- leases

  leaseAcquire(p: { queue: string; partition: number; owner: string; ttlMs: number; now: number }): Promise<Lease | undefined> {
    return leases.leaseAcquire(this.state, p);
  }

  leaseRelease(p: { queue: string; partition: number; owner: string; epoch: number }): Promise<void> {
    return leases.leaseRelease(this.state, p);
  }

  // ---- jobs

  jobClaimExpire(p: { now: number; limit: number }): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
    return running.jobClaimExpire(this.state, p);
  }

  jobClaimMany(p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number }): Promise<JobRecord[]> {
    return handOut.jobClaimMany(this.state, p);
  }

  jobCheckpointMany(p: { items: Array<transitions.CheckpointInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return running.jobCheckpointMany(this.state, p);
  }

  jobCompleteMany(p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number }): Promise<OutcomeResult[]> {
    return running.jobCompleteMany(this.state, p);
  }

  jobCount(p: { queue: string; filter: JobFilter; now: number }): Promise<number> {
    return reads.jobCount(this.state, p);
  }

  jobDeleteFinished(p: { queue: string; succeededBefore: number; failedBefore: number; limit: number }): Promise<number> {
    return bulk.jobDeleteFinished(this.state, p);
  }

  jobDeleteMany(p: { queue: string; filter: JobFilter; limit: number; now: number }): Promise<number> {
    return bulk.jobDeleteMany(this.state, p);
  }

  jobFailMany(p: { items: Array<transitions.FailureInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return running.jobFailMany(this.state, p);
  }

  jobGetMany(p: { ids: string[]; bodies?: boolean }): Promise<Array<JobRecord | undefined>> {
    return reads.jobGetMany(this.state, p);
  }

  jobInsertMany(p: { jobs: NewJob[]; now: number }): Promise<string[]> {
    return insert.jobInsertMany(this.state, p);
  }

  jobNextDueAt(p: { queue: string; partition: number }): Promise<number | undefined> {
    return handOut.jobNextDueAt(this.state, p);
  }

  jobPeekMany(p: { queue: string; limit: number; now: number }): Promise<JobRecord[]> {
    return reads.jobPeekMany(this.state, p);
  }

  jobReleaseBuffered(p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number }): Promise<number> {
    return handOut.jobReleaseBuffered(this.state, p);
  }

  jobRetryFailed(p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number }): Promise<number> {
    return bulk.jobRetryFailed(this.state, p);
  }

  jobScan(p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number }): Promise<JobRecord[]> {
    return reads.jobScan(this.state, p);
  }

  jobStartMany(p: { queue: string; partition: number; epoch: number; plans: transitions.HandOutPlan[]; now: number }): Promise<string[]> {
    return handOut.jobStartMany(this.state, p);
  }

  // ---- queues

  queueCreate(p: { name: string; config: QueueRecord["config"]; now: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    return queues.queueCreate(this.state, p);
  }

  queueDelete(p: { name: string }): Promise<boolean> {
    return queues.queueDelete(this.state, p);
  }

  queueGet(p: { name: string }): Promise<QueueRecord | undefined> {
    return queues.queueGet(this.state, p);
  }

  queueList(): Promise<QueueRecord[]> {
    return queues.queueList(this.state);
  }

  queueStats(p: { name: string; now: number }): Promise<QueueStatsRecord> {
    return queues.queueStats(this.state, p);
  }

  queueUpdate(p: { name: string; config: QueueRecord["config"] }): Promise<QueueRecord | undefined> {
    return queues.queueUpdate(this.state, p);
  }

  async close(): Promise<void> {}
}
