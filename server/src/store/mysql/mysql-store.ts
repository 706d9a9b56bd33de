/**
 * The MySQL / MariaDB store (MySQL 8, MariaDB ≥ 10.6), over mysql2. docs/mysql.md has
 * the schema, why each index exists and the plans of the hot queries.
 *
 * How it keeps the store's rules:
 * - Every job change is a patch from domain/transitions.ts. Job-independent transitions
 *   (retryFailed, and unbuffer for rows an earlier runlater marked buffered) become one
 *   UPDATE; job-dependent ones
 *   (handOut, succeed, fail, expireClaim, checkpoint) run as one short transaction: lock
 *   the batch's rows (SELECT … FOR UPDATE), decide each with transitions.ts, write them
 *   all with one UPDATE whose WHERE re-checks state and claim token. The lock and the
 *   write are one atomic step; no other writer can slip in between.
 * - Hot-path exceptions, where a batch shares its values: a start whose plans share a
 *   claim token, expiry and retry delay, and an ACK without custom status, are one UPDATE
 *   per group whose WHERE is the whole fence (handOut's attempt counters move in SQL).
 *   Rows matched must equal the group's size, or the transaction rolls back and the
 *   exact path above decides.
 * - The claim writes nothing: claimed jobs stay pending in their rows and are held in this
 *   process's memory (held-jobs.ts, claim.ts) until the broker starts or releases them.
 * - The start, the one ownership write, checks the lease epoch inside its transaction,
 *   under a shared lock on the lease row, so a takeover waits for it to commit (the fast
 *   start joins the lease row in its UPDATE, which takes that same lock).
 * - Sessions use READ COMMITTED: locking reads take no gap locks.
 * - Several URLs are shards: a partition's jobs and lease live on the shard its queue's
 *   stored placement names (../placement.ts, cached in-process); queue metadata and the
 *   placements on shard 0. shard-map.ts checks the --store list at open.
 * - Ordering keys (ordering.ts): a job with a key joins its key's sequence when enqueued
 *   or retried, and leaves it, promoting the next, in the same transaction that ends or
 *   deletes it. Jobs without a key skip all of it.
 *
 * This class is the Store and only delegates, one module per concern, each given the
 * store's MysqlContext (mysql-context.ts): broker-registry.ts, leases.ts, queue-admin.ts,
 * insert-jobs.ts (enqueue), hand-out.ts (claim, start, release), running-writes.ts (ACK,
 * checkpoint, claim expiry), bulk-admin.ts (GC, delete, retry) and job-reads.ts.
 */
import type { JobFilter, ScanCursor } from "../../domain/job-filter.js";
import type { JobRecord, NewJob } from "../../domain/job-record.js";
import type { QueueConfig } from "../../domain/queue-config.js";
import type { CheckpointInput, FailureInput, HandOutPlan } from "../../domain/transitions.js";
import { ShardRouter } from "../shard-router.js";
import type { BrokerEntry, Lease, OutcomeResult, QueueRecord, QueueStatsRecord, Store } from "../store.js";
import * as brokers from "./broker-registry.js";
import * as bulk from "./bulk-admin.js";
import * as handOut from "./hand-out.js";
import { HeldJobs } from "./held-jobs.js";
import * as insert from "./insert-jobs.js";
import * as reads from "./job-reads.js";
import * as leases from "./leases.js";
import { migrate } from "./migrate.js";
import type { MysqlContext } from "./mysql-context.js";
import * as queues from "./queue-admin.js";
import * as running from "./running-writes.js";
import { Shard } from "./shard.js";
import { checkShards } from "./shard-map.js";

export interface MysqlStoreOptions {
  /** How long a statement keeps retrying transient errors (deadlock, lost connection, restart). */
  retryForMs?: number;
  /** Connections per shard. */
  connectionLimit?: number;
  /** Told about broken or refused connections (each is retried). */
  onConnectionError?: (err: Error, shard: number) => void;
}

/** Opens the shards and brings their schema up to date. */
export async function openMysqlStore(urls: string[], o: MysqlStoreOptions = {}): Promise<MysqlStore> {
  const shards = urls.map(
    (url, i) => new Shard(i, url, { retryForMs: o.retryForMs ?? 30_000, connectionLimit: o.connectionLimit ?? 10, onConnectionError: o.onConnectionError }),
  );
  let legacyShards: number;
  try {
    for (const shard of shards) await migrate(shard);
    legacyShards = await checkShards(shards);
  } catch (err) {
    await Promise.all(shards.map((s) => s.close().catch(() => undefined)));
    throw err;
  }
  return new MysqlStore(shards, legacyShards);
}

export class MysqlStore implements Store {
  readonly name = "mysql";
  /** Claims of 1,000: measured 4–25 % more jobs/s end to end than claims of 250 (docs/benchmarks.md). */
  readonly defaultBufferSize = 4000;

  /** The shards, their routing and the held jobs, shared by the modules this class delegates to. */
  private readonly ctx: MysqlContext;

  /** @param legacyShards the shard count of queues created before placements were stored */
  constructor(shards: Shard[], legacyShards: number = shards.length) {
    this.ctx = {
      shards,
      router: new ShardRouter(shards, (names) => queues.loadPlacement(this.ctx, names), legacyShards),
      held: new HeldJobs(),
    };
  }

  // ---- broker registry (shard 0)

  brokerHeartbeat(p: { id: string; url: string; ttlMs: number; now: number }): Promise<void> {
    return brokers.brokerHeartbeat(this.ctx, p);
  }

  brokerList(p: { now: number }): Promise<BrokerEntry[]> {
    return brokers.brokerList(this.ctx, p);
  }

  brokerLeave(p: { id: string }): Promise<void> {
    return brokers.brokerLeave(this.ctx, p);
  }

  // ---- leases

  leaseAcquire(p: { queue: string; partition: number; owner: string; ttlMs: number; now: number }): Promise<Lease | undefined> {
    return leases.leaseAcquire(this.ctx, p);
  }

  leaseRelease(p: { queue: string; partition: number; owner: string; epoch: number }): Promise<void> {
    return leases.leaseRelease(this.ctx, p);
  }

  // ---- jobs

  jobClaimExpire(p: { now: number; limit: number }): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
    return running.jobClaimExpire(this.ctx, p);
  }

  jobClaimMany(p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number }): Promise<JobRecord[]> {
    return handOut.jobClaimMany(this.ctx, p);
  }

  jobCheckpointMany(p: { items: Array<CheckpointInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return running.jobCheckpointMany(this.ctx, p);
  }

  jobCompleteMany(p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number }): Promise<OutcomeResult[]> {
    return running.jobCompleteMany(this.ctx, p);
  }

  jobCount(p: { queue: string; filter: JobFilter; now: number }): Promise<number> {
    return reads.jobCount(this.ctx, p);
  }

  jobDeleteFinished(p: { queue: string; succeededBefore: number; failedBefore: number; limit: number }): Promise<number> {
    return bulk.jobDeleteFinished(this.ctx, p);
  }

  jobDeleteMany(p: { queue: string; filter: JobFilter; limit: number; now: number }): Promise<number> {
    return bulk.jobDeleteMany(this.ctx, p);
  }

  jobFailMany(p: { items: Array<FailureInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return running.jobFailMany(this.ctx, p);
  }

  jobGetMany(p: { ids: string[]; bodies?: boolean }): Promise<Array<JobRecord | undefined>> {
    return reads.jobGetMany(this.ctx, p);
  }

  jobInsertMany(p: { jobs: NewJob[]; now: number }): Promise<string[]> {
    return insert.jobInsertMany(this.ctx, p);
  }

  jobNextDueAt(p: { queue: string; partition: number }): Promise<number | undefined> {
    return handOut.jobNextDueAt(this.ctx, p);
  }

  jobPeekMany(p: { queue: string; limit: number; now: number }): Promise<JobRecord[]> {
    return reads.jobPeekMany(this.ctx, p);
  }

  jobReleaseBuffered(p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number }): Promise<number> {
    return handOut.jobReleaseBuffered(this.ctx, p);
  }

  jobRetryFailed(p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number }): Promise<number> {
    return bulk.jobRetryFailed(this.ctx, p);
  }

  jobScan(p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number }): Promise<JobRecord[]> {
    return reads.jobScan(this.ctx, p);
  }

  jobStartMany(p: { queue: string; partition: number; epoch: number; plans: HandOutPlan[]; now: number }): Promise<string[]> {
    return handOut.jobStartMany(this.ctx, p);
  }

  // ---- queues

  queueCreate(p: { name: string; config: QueueConfig; now: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    return queues.queueCreate(this.ctx, p);
  }

  queueDelete(p: { name: string }): Promise<boolean> {
    return queues.queueDelete(this.ctx, p);
  }

  queueGet(p: { name: string }): Promise<QueueRecord | undefined> {
    return queues.queueGet(this.ctx, p);
  }

  queueList(): Promise<QueueRecord[]> {
    return queues.queueList(this.ctx);
  }

  queueStats(p: { name: string; now: number }): Promise<QueueStatsRecord> {
    return queues.queueStats(this.ctx, p);
  }

  queueUpdate(p: { name: string; config: QueueConfig }): Promise<QueueRecord | undefined> {
    return queues.queueUpdate(this.ctx, p);
  }

  async close(): Promise<void> {
    await Promise.all(this.ctx.shards.map((s) => s.close()));
  }
}
