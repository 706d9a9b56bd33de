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
 * The class only makes the store's MysqlContext (mysql-context.ts): each Store method hands
 * it to a module function (../delegating-store.ts), one module per concern: broker-registry.ts,
 * leases.ts, queue-admin.ts, insert-jobs.ts (enqueue), hand-out.ts (claim, start, release),
 * running-writes.ts (ACK, checkpoint, claim expiry), bulk-admin.ts (GC, delete, retry) and
 * job-reads.ts. Store.workflows is workflows.ts (with instance-apply.ts), Store.schedules
 * schedules.ts.
 */
import { DelegatingStore, type StoreFunctions } from "../delegating-store.js";
import { ShardRouter } from "../shard-router.js";
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
import { MysqlSchedules } from "./schedules.js";
import { Shard } from "./shard.js";
import { checkShards } from "./shard-map.js";
import * as tokens from "./tokens.js";
import { MysqlWorkflows } from "./workflows.js";

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
    (url, i) =>
      new Shard(i, url, {
        retryForMs: o.retryForMs ?? 30_000,
        connectionLimit: o.connectionLimit ?? 10,
        onConnectionError: o.onConnectionError,
      }),
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

/** Each Store method's module function (../delegating-store.ts hands it the context). */
const functions: StoreFunctions<MysqlContext> = {
  ...brokers,
  ...bulk,
  ...handOut,
  ...insert,
  ...leases,
  ...queues,
  ...reads,
  ...running,
  ...tokens,
};

export class MysqlStore extends DelegatingStore<MysqlContext> {
  readonly name = "mysql";
  /** Claims of 1,000: measured 4–25 % more jobs/s end to end than claims of 250 (docs/benchmarks.md). */
  readonly defaultBufferSize = 4000;

  /** The shards, their routing and the held jobs, shared by the modules this class delegates to. */
  protected readonly ctx: MysqlContext;
  /** Workflows (workflows.ts): each instance on one shard with its runs' queue jobs. */
  readonly workflows: MysqlWorkflows;
  /** Schedules (schedules.ts): each beside what its fires start. */
  readonly schedules: MysqlSchedules;

  /** @param legacyShards the shard count of queues created before placements were stored */
  constructor(shards: Shard[], legacyShards: number = shards.length) {
    super(functions);
    this.ctx = {
      shards,
      router: new ShardRouter(shards, (names) => queues.loadPlacement(this.ctx, names), legacyShards),
      held: new HeldJobs(),
    };
    this.workflows = new MysqlWorkflows(this.ctx);
    this.schedules = new MysqlSchedules(this.ctx, this.workflows);
  }

  async close(): Promise<void> {
    await Promise.all(this.ctx.shards.map((s) => s.close()));
  }
}
