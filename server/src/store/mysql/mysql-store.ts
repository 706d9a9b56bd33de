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
 */
import { queueNotFound } from "../../domain/errors.js";
import { parseJobId } from "../../domain/job-id.js";
import { compareForDequeue, compareForScan, type JobRecord, type NewJob, type StoredState, withoutBody } from "../../domain/job-record.js";
import type { QueueConfig } from "../../domain/queue-config.js";
import * as transitions from "../../domain/transitions.js";
import type { CheckpointInput, FailureInput, HandOutPlan, JobPatch } from "../../domain/transitions.js";
import { decodePlacement, encodePlacement, placePartitions, type StoredQueuePlacement } from "../placement.js";
import { type Located, partitionOfId, ShardRouter } from "../shard-router.js";
import type { BrokerEntry, Lease, OutcomeResult, QueueRecord, QueueStatsRecord, Store } from "../store.js";
import { claimDue, nextDueAt } from "./claim.js";
import { addClaimChecks, nextClaimCheck, takeDueChecks } from "./claim-checks.js";
import { HeldJobs } from "./held-jobs.js";
import { insertOnShard } from "./insert-jobs.js";
import { filterWhere, matchingJobs, scanPage } from "./job-filter.js";
import { migrate } from "./migrate.js";
import { joinSequences, leaveSequences, type SequenceJob } from "./ordering.js";
import * as sql from "./queries.js";
import { type JobRow, patchManyStatement, setClause, toRecord } from "./rows.js";
import { type Conn, type Param, run, select, Shard } from "./shard.js";
import { checkShards } from "./shard-map.js";
import { duplicateKeyIndex } from "./transient.js";
import type { JobFilter, ScanCursor } from "../../domain/job-filter.js";

export interface MysqlStoreOptions {
  /** How long a statement keeps retrying transient errors (deadlock, lost connection, restart). */
  retryForMs?: number;
  /** Connections per shard. */
  connectionLimit?: number;
  /** Told about broken or refused connections (each is retried). */
  onConnectionError?: (err: Error, shard: number) => void;
}

/** Rows changed per statement in bulk work (GC, delete, retry), so no statement holds locks for long. */
const CHUNK = 1000;

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

interface QueueRow {
  name: string;
  config: string;
  created_at: number | string;
}

export class MysqlStore implements Store {
  readonly name = "mysql";
  /** Claims of 1,000: measured 4–25 % more jobs/s end to end than claims of 250 (docs/benchmarks.md). */
  readonly defaultBufferSize = 4000;

  /** Which shard holds each partition (../shard-router.ts): a cache hit on the hot path. */
  private readonly router: ShardRouter<Shard>;
  /** What this process's brokers claimed and have not started: the buffered state (held-jobs.ts). */
  private readonly held = new HeldJobs();

  /** @param legacyShards the shard count of queues created before placements were stored */
  constructor(
    private readonly shards: Shard[],
    legacyShards: number = shards.length,
  ) {
    this.router = new ShardRouter(shards, (queues) => this.loadPlacement(queues), legacyShards);
  }

  // ---- broker registry (shard 0)

  async brokerHeartbeat(p: { id: string; url: string; ttlMs: number; now: number }): Promise<void> {
    await this.shards[0]!.session((c) => run(c, sql.BROKER_UPSERT, [p.id, p.url, p.now + p.ttlMs]));
  }

  async brokerList(p: { now: number }): Promise<BrokerEntry[]> {
    return this.shards[0]!.session(async (c) => {
      if (Math.random() < 0.01) await run(c, sql.BROKER_PURGE_DEAD, [p.now - 60 * 60_000]);
      const rows = await select<{ id: string; url: string; expires_at: number | string }>(c, sql.BROKER_LIVE, [p.now]);
      return rows.map((r) => ({ id: r.id, url: r.url, expiresAt: Number(r.expires_at) }));
    });
  }

  async brokerLeave(p: { id: string }): Promise<void> {
    await this.shards[0]!.session((c) => run(c, sql.BROKER_DELETE, [p.id]));
  }

  // ---- leases

  async leaseAcquire(p: { queue: string; partition: number; owner: string; ttlMs: number; now: number }): Promise<Lease | undefined> {
    const shard = await this.router.shardOf(p.queue, p.partition);
    for (let tries = 0; ; tries++) {
      try {
        return await shard.transaction(async (c) => {
          const [row] = await select<{ owner: string; epoch: number | string; expires_at: number | string }>(c, sql.LEASE_LOCK, [p.queue, p.partition]);
          if (row && row.owner !== "" && row.owner !== p.owner && Number(row.expires_at) > p.now) return undefined;
          // Same owner renews under its epoch; anyone else (or after a release) gets a higher one.
          const epoch = !row ? 1 : row.owner === p.owner ? Number(row.epoch) : Number(row.epoch) + 1;
          const lease: Lease = { queue: p.queue, partition: p.partition, owner: p.owner, epoch, expiresAt: p.now + p.ttlMs };
          if (row) await run(c, sql.LEASE_UPDATE, [p.owner, epoch, lease.expiresAt, p.queue, p.partition]);
          else await run(c, sql.LEASE_INSERT, [p.queue, p.partition, p.owner, epoch, lease.expiresAt]);
          return lease;
        });
      } catch (err) {
        // Two brokers inserted the first lease row at once: the loser reads the winner's row.
        if (duplicateKeyIndex(err) === undefined || tries >= 2) throw err;
      }
    }
  }

  async leaseRelease(p: { queue: string; partition: number; owner: string; epoch: number }): Promise<void> {
    // The broker has released what it held; forget the partition's cursors with it.
    this.held.dropBelow(p.queue, p.partition, p.epoch + 1);
    await (await this.router.shardOf(p.queue, p.partition)).session((c) => run(c, sql.LEASE_RELEASE, [p.queue, p.partition, p.owner, p.epoch]));
  }

  // ---- jobs

  async jobClaimExpire(p: { now: number; limit: number }): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
    const expired: JobRecord[] = [];
    let nextExpiryAt: number | undefined;
    for (const shard of this.shards) {
      // One short transaction per round, each looking at no more jobs than may still expire,
      // until the limit is reached or no check is due. Most checks find their jobs acknowledged:
      // a round that expires nothing still deleted its checks, so the loop ends.
      while (expired.length < p.limit) {
        const round = await shard.transaction(async (c) => {
          const ids = await takeDueChecks(c, p.now, p.limit - expired.length);
          if (ids.length === 0) return undefined;
          const rows = (await select<JobRow>(c, sql.expiredClaims(ids.length), [...ids, p.now])).map(toRecord);
          const changed = await this.applyPatches(c, rows.map((job) => ({ job, patch: transitions.expireClaim(job, p.now) })));
          return { changed, promotedBy: await leaveSequences(c, changed.filter(endedWithKey), p.now) };
        });
        if (!round) break;
        expired.push(...round.changed);
        // Committed: jobs back to pending, and promoted ones, may sit behind a claim's cursor.
        for (const job of round.changed) if (job.state === "pending") this.held.noteQueued(job.id, job.priority, job.runAfter);
        for (const [id, at] of round.promotedBy) this.held.noteQueued(id, undefined, at);
      }
      const next = await shard.session((c) => nextClaimCheck(c, p.now));
      if (next !== undefined) nextExpiryAt = Math.min(nextExpiryAt ?? Infinity, next);
    }
    return { expired, nextExpiryAt };
  }

  async jobClaimMany(p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number }): Promise<JobRecord[]> {
    const shard = await this.router.shardOf(p.queue, p.partition);
    // A read and nothing else (docs/mysql.md, "The claim writes nothing"): the jobs stay
    // pending in the table and are held in memory until the broker starts or releases them.
    const claimed = await shard.session(async (c) => {
      const [lease] = await select<{ epoch: number | string }>(c, sql.LEASE_EPOCH, [p.queue, p.partition]);
      if (lease === undefined || Number(lease.epoch) !== p.epoch) return [];
      const held = this.held.forClaim(p.queue, p.partition, p.epoch, p.now);
      return held.reads(() => claimDue(c, held, p));
    });
    const patch = transitions.claimIntoBuffer(p.epoch);
    return claimed.map((job) => ({ ...job, ...patch }));
  }

  async jobCheckpointMany(p: { items: Array<CheckpointInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return this.applyToRunning(p.items, p.now, (job, item) => transitions.checkpoint(job, item, p.now));
  }

  async jobCompleteMany(p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number }): Promise<OutcomeResult[]> {
    // Without a custom status, succeed sets the same fields on every job (the status stays):
    // the fast path can write it by claim token without reading the rows first.
    const { customStatus: _, ...same } = transitions.succeed(NO_JOB, "", p.now);
    const fast = (item: { customStatus: string }) => (item.customStatus === "" ? same : undefined);
    return this.applyToRunning(p.items, p.now, (job, item) => transitions.succeed(job, item.customStatus, p.now), fast);
  }

  async jobCount(p: { queue: string; filter: JobFilter; now: number }): Promise<number> {
    const counts = await Promise.all(
      this.shards.map((shard) =>
        shard.session(async (c) => {
          if (p.filter.bodyRegex) {
            let n = 0;
            for await (const _ of matchingJobs(c, p.queue, p.filter, p.now)) n++;
            return n;
          }
          const where = filterWhere(p.queue, p.filter, p.now);
          const [row] = await select<{ n: number | string }>(c, `SELECT COUNT(*) AS n FROM jobs WHERE ${where.sql}`, where.params);
          return Number(row?.n ?? 0);
        }),
      ),
    );
    return counts.reduce((a, b) => a + b, 0);
  }

  async jobDeleteFinished(p: { queue: string; succeededBefore: number; failedBefore: number; limit: number }): Promise<number> {
    let deleted = 0;
    for (const shard of this.shards) {
      for (const [state, before] of [["succeeded", p.succeededBefore], ["failed", p.failedBefore]] as const) {
        while (deleted < p.limit) {
          const chunk = Math.min(CHUNK, p.limit - deleted);
          const [found, n] = await shard.session(async (c) => {
            const ids = (await select<{ id: string }>(c, sql.FINISHED_EXPIRED, [p.queue, state, before, chunk])).map((r) => r.id);
            return [ids.length, ids.length === 0 ? 0 : await run(c, sql.deleteFinishedIds(ids.length), [...ids, state, before])] as const;
          });
          deleted += n;
          if (found < chunk) break;
        }
      }
    }
    return deleted;
  }

  async jobDeleteMany(p: { queue: string; filter: JobFilter; limit: number; now: number }): Promise<number> {
    const where = filterWhere(p.queue, p.filter, p.now);
    let deleted = 0;
    for (const shard of this.shards) {
      while (deleted < p.limit) {
        const chunk = Math.min(CHUNK, p.limit - deleted);
        // Ids first, then DELETE by id with the filter re-checked: a statement replayed after
        // a lost connection can never delete more than `limit`.
        const { ids, n } = await shard.session(async (c) => {
          const ids: string[] = [];
          // A job that has not ended may head an ordering key: then delete and promote in one transaction.
          let keyed = false;
          if (!p.filter.bodyRegex) {
            for (const row of await select<{ id: string; state: StoredState; ordering_key: Buffer | null }>(c, sql.selectIdKeys(where.sql), [...where.params, chunk])) {
              ids.push(row.id);
              keyed ||= row.ordering_key !== null && !transitions.isTerminal(row.state);
            }
          } else {
            for await (const job of matchingJobs(c, p.queue, p.filter, p.now)) {
              ids.push(job.id);
              keyed ||= job.orderingKey !== "" && !transitions.isTerminal(job.state);
              if (ids.length >= chunk) break;
            }
          }
          if (ids.length === 0 || keyed) return { ids, n: undefined };
          return { ids, n: await run(c, `${sql.deleteIds(ids.length)} AND ${where.sql}`, [...ids, ...where.params]) };
        });
        deleted += n ?? (ids.length === 0 ? 0 : await shard.transaction((c) => this.deleteWithKeys(c, ids, where, p.now)));
        // Deleted jobs are no longer held (one the filter no longer matched is looked for again).
        this.held.forget(ids);
        // Deleting the head of an ordering key promotes the next job, maybe behind a cursor.
        if (n === undefined && ids.length > 0) this.held.noteQueue(p.queue);
        if (ids.length < chunk) break;
      }
    }
    return deleted;
  }

  async jobFailMany(p: { items: Array<FailureInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return this.applyToRunning(p.items, p.now, (job, item) => transitions.fail(job, item, p.now));
  }

  async jobGetMany(p: { ids: string[]; bodies?: boolean }): Promise<Array<JobRecord | undefined>> {
    const found = new Map<string, JobRecord>();
    await Promise.all(
      [...(await this.router.groupByShard(p.ids, partitionOfId))].map(([shard, items]) =>
        shard.session(async (c) => {
          const ids = [...new Set(items.map((k) => k.item))];
          for (const row of await select<JobRow>(c, sql.selectJobs(ids.length, p.bodies !== false), ids)) found.set(row.id, this.held.overlay(toRecord(row)));
        }),
      ),
    );
    return p.ids.map((id) => found.get(id));
  }

  async jobInsertMany(p: { jobs: NewJob[]; now: number }): Promise<string[]> {
    if (p.jobs.length === 0) return [];
    for (let tries = 0; ; tries++) {
      try {
        const ids = await this.insertOnce(p.jobs, p.now, tries > 0);
        // A job due before a claim's cursor would be passed over: held-jobs.ts looks again.
        if (!this.held.empty) for (const job of p.jobs) this.held.get(job.queue, job.partition)?.note(job.priority, job.runAfter);
        return ids;
      } catch (err) {
        // A concurrent enqueue took one of our idempotency keys between our lookup and our
        // INSERT: run again, and the lookup now finds its job. Bounded: each race needs a new key.
        if (duplicateKeyIndex(err) !== "jobs_idempotency" || tries >= 10) throw err;
      }
    }
  }

  async jobNextDueAt(p: { queue: string; partition: number }): Promise<number | undefined> {
    const shard = await this.router.shardOf(p.queue, p.partition);
    return shard.session((c) => nextDueAt(c, this.held.get(p.queue, p.partition), p.queue, p.partition));
  }

  async jobPeekMany(p: { queue: string; limit: number; now: number }): Promise<JobRecord[]> {
    const pages = await Promise.all(this.shards.map((s) => s.session((c) => select<JobRow>(c, sql.PEEK, [p.queue, p.now, p.limit]))));
    return pages
      .flat()
      .map((row) => this.held.overlay(toRecord(row)))
      .sort(compareForDequeue)
      .slice(0, p.limit);
  }

  async jobReleaseBuffered(p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number }): Promise<number> {
    if (p.ids !== undefined) {
      const held = this.held.get(p.queue, p.partition);
      const ours = held !== undefined && (held.epoch === p.epoch || (p.belowEpoch !== undefined && held.epoch < p.belowEpoch));
      if (!ours) return 0;
      // Nothing to write: the rows are pending (behind the cursor now: held.release notes them).
      return held.release(p.ids);
    }
    if (p.belowEpoch === undefined) return 0;
    let released = this.held.dropBelow(p.queue, p.partition, p.belowEpoch);
    // Rows an earlier runlater marked buffered (its claim wrote the state): after an upgrade.
    const shard = await this.router.shardOf(p.queue, p.partition);
    const set = setClause(transitions.unbuffer());
    for (;;) {
      const n = await shard.session((c) => run(c, sql.releaseBufferedBelow(set.sql), [...set.params, p.queue, p.partition, p.belowEpoch!, CHUNK]));
      released += n;
      if (n < CHUNK) return released;
    }
  }

  async jobRetryFailed(p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number }): Promise<number> {
    const set = setClause(transitions.retryFailed(p.attemptsAllowed, p.runAfter, p.now));
    const oldest = sql.failedOldest(p.priority !== undefined);
    let retried = 0;
    for (const shard of this.shards) {
      while (retried < p.limit) {
        const chunk = Math.min(CHUNK, p.limit - retried);
        const { ids, n } = await shard.session(async (c) => {
          const params: Param[] = [p.queue, ...(p.priority !== undefined ? [p.priority] : []), chunk];
          const rows = await select<{ id: string; ordering_key: Buffer | null }>(c, oldest, params);
          const ids = rows.map((r) => r.id);
          // Jobs with an ordering key rejoin their sequences: a transaction of their own.
          if (ids.length === 0 || rows.some((r) => r.ordering_key !== null)) return { ids, n: undefined };
          return { ids, n: await run(c, sql.retryFailedIds(set.sql, ids.length), [...set.params, ...ids]) };
        });
        retried += n ?? (ids.length === 0 ? 0 : await shard.transaction((c) => this.retryWithKeys(c, ids, p)));
        if (ids.length > 0) this.held.noteQueue(p.queue);
        if (ids.length < chunk) break;
      }
    }
    return retried;
  }

  async jobScan(p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number }): Promise<JobRecord[]> {
    const pages = await Promise.all(
      this.shards.map((shard) =>
        shard.session(async (c) => {
          if (!p.filter.bodyRegex) return scanPage(c, p.queue, p.filter, p.limit, p.cursor, p.now, p.bodies !== false);
          const page: JobRecord[] = [];
          for await (const job of matchingJobs(c, p.queue, p.filter, p.now, p.cursor)) {
            page.push(p.bodies === false ? withoutBody(job) : job);
            if (page.length >= p.limit) break;
          }
          return page;
        }),
      ),
    );
    return pages
      .flat()
      .map((job) => this.held.overlay(job))
      .sort(compareForScan)
      .slice(0, p.limit);
  }

  async jobStartMany(p: { queue: string; partition: number; epoch: number; plans: HandOutPlan[]; now: number }): Promise<string[]> {
    const held = this.held.get(p.queue, p.partition);
    if (!held || held.epoch !== p.epoch) return [];
    // Only jobs this process holds under the epoch: any other was released, started already
    // or claimed under another epoch. Their rows are pending; the lease fences the write.
    const plans = p.plans.filter((plan) => held.jobs.has(plan.id));
    if (plans.length === 0) return [];
    const ids = [...new Set(plans.map((plan) => plan.id))];
    let started: Set<string> | undefined;
    try {
      started = await this.startHeld(p, plans);
    } catch (err) {
      // Started or not, the broker has let go of them: a claim finds those still pending.
      held.release(ids);
      throw err;
    }
    // Lease lost: the jobs stay held until a release or the next owner's epoch drops them.
    if (started === undefined) return [];
    // Started, or no longer pending (deleted): either way no longer ours to hand out.
    held.take(ids);
    return plans.map((plan) => plan.id).filter((id) => started.has(id));
  }

  /** The start's writes: the ids started, or undefined when the lease is no longer at `epoch`. */
  private async startHeld(p: { queue: string; partition: number; epoch: number; now: number }, plans: HandOutPlan[]): Promise<Set<string> | undefined> {
    const shard = await this.router.shardOf(p.queue, p.partition);
    const groups = startGroups(plans);
    if (groups) {
      // Fast path: one epoch-fenced UPDATE per group of equal hand-out values, no read.
      // Rows matched = rows started; anything less is rolled back and decided exactly below.
      const started = await wholeOrNothing(shard, async (c) => {
        let n = 0;
        for (const g of groups) {
          const set = setClause(startPatch(g.plan, p.now));
          n += await run(c, sql.startGroup(set.sql, g.ids.length), [p.queue, p.partition, p.epoch, ...set.params, ...g.ids]);
        }
        if (n !== plans.length) throw new NotWhole();
        await addClaimChecks(c, plans);
        return new Set(plans.map((plan) => plan.id));
      });
      if (started) return started;
    }
    const byId = new Map(plans.map((plan) => [plan.id, plan]));
    const ids = [...byId.keys()];
    return shard.transaction(async (c) => {
      if (!(await this.holdsLease(c, p.queue, p.partition, p.epoch))) return undefined;
      const jobs = (await select<JobRow>(c, sql.selectPendingLocked(ids.length), ids)).map(toRecord);
      const started = await this.applyPatches(
        c,
        jobs.map((job) => ({ job, patch: transitions.handOut(job, byId.get(job.id)!, p.now) })),
        { sql: "state = 'pending'", params: [] },
      );
      await addClaimChecks(c, started);
      return new Set(jobs.map((j) => j.id));
    });
  }

  // ---- queues

  async queueCreate(p: { name: string; config: QueueConfig; now: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    this.router.placement.forget(p.name);
    try {
      // The row and its placement in one transaction: a queue never exists without its map.
      // Placed over the current shard count, so a queue created after shards were added uses them.
      const placement = encodePlacement(placePartitions(p.name, 0, p.config.partitions, this.shards.length));
      await this.shards[0]!.transaction(async (c) => {
        await run(c, sql.QUEUE_INSERT, [p.name, JSON.stringify(p.config), p.now]);
        await run(c, sql.PLACEMENT_UPSERT, [p.name, placement]);
      });
      return { queue: { name: p.name, config: p.config, createdAt: p.now }, created: true };
    } catch (err) {
      if (duplicateKeyIndex(err) === undefined) throw err;
      const [row] = await this.shards[0]!.session((c) => select<QueueRow>(c, sql.QUEUE_SELECT, [p.name]));
      if (!row) throw err;
      return { queue: toQueue(row), created: false };
    }
  }

  async queueDelete(p: { name: string }): Promise<boolean> {
    // The row goes first: enqueues hold a shared lock on it, so once this commits no
    // enqueue into the queue is in flight, and the job deletion below sees all of them.
    // The placement goes with it; the jobs are found on every shard, so none is needed below.
    const deleted = await this.shards[0]!.transaction(async (c) => {
      const n = await run(c, sql.QUEUE_DELETE, [p.name]);
      await run(c, sql.PLACEMENT_DELETE, [p.name]);
      return n > 0;
    });
    this.router.placement.forget(p.name);
    this.held.dropQueue(p.name);
    for (const shard of this.shards) {
      // Always, even when the row was gone: finishes a delete that crashed half-way.
      while ((await shard.session((c) => run(c, sql.DELETE_QUEUE_JOBS, [p.name, CHUNK]))) >= CHUNK);
      // Then the ordering-key sequences (nothing to promote: every job is gone).
      while ((await shard.session((c) => run(c, sql.DELETE_QUEUE_MEMBERS, [p.name, CHUNK]))) >= CHUNK);
      while ((await shard.session((c) => run(c, sql.DELETE_QUEUE_KEYS, [p.name, CHUNK]))) >= CHUNK);
      await shard.session((c) => run(c, sql.LEASE_RELEASE_QUEUE, [p.name]));
    }
    return deleted;
  }

  async queueGet(p: { name: string }): Promise<QueueRecord | undefined> {
    const [row] = await this.shards[0]!.session((c) => select<QueueRow>(c, sql.QUEUE_SELECT, [p.name]));
    return row ? toQueue(row) : undefined;
  }

  async queueList(): Promise<QueueRecord[]> {
    return (await this.shards[0]!.session((c) => select<QueueRow>(c, sql.QUEUE_SELECT_ALL))).map(toQueue);
  }

  async queueStats(p: { name: string; now: number }): Promise<QueueStatsRecord> {
    if (!(await this.queueGet({ name: p.name }))) throw queueNotFound(p.name);
    type StatsRow = Record<"pending" | "scheduled" | "running" | "succeeded" | "failed", number | string> & { oldest_due: number | string | null };
    const rows = await Promise.all(this.shards.map((s) => s.session(async (c) => (await select<StatsRow>(c, sql.QUEUE_STATS, [p.now, p.now, p.name, p.name]))[0]!)));
    const sum = (k: keyof StatsRow) => rows.reduce((a, r) => a + Number(r[k] ?? 0), 0);
    const oldest = rows.filter((r) => r.oldest_due !== null).map((r) => Number(r.oldest_due));
    return {
      pending: sum("pending"),
      scheduled: sum("scheduled"),
      running: sum("running"),
      succeeded: sum("succeeded"),
      failed: sum("failed"),
      oldestPendingAgeMs: oldest.length === 0 ? 0 : Math.max(0, p.now - Math.min(...oldest)),
    };
  }

  async queueUpdate(p: { name: string; config: QueueConfig }): Promise<QueueRecord | undefined> {
    const updated = await this.shards[0]!.transaction(async (c) => {
      const [current] = await select<{ config: string; shards: string | null }>(c, sql.QUEUE_PLACEMENT_LOCK, [p.name]);
      if (!current) return undefined;
      const stored: StoredQueuePlacement = { partitions: (JSON.parse(current.config) as QueueConfig).partitions, map: current.shards === null ? undefined : decodePlacement(current.shards) };
      const map = this.router.placement.resolveStored(p.name, stored);
      if (p.config.partitions > map.length) {
        // Added partitions are placed over the current shard count (so they can use added
        // shards); the existing ones stay where they are. Maps never shrink.
        map.push(...placePartitions(p.name, map.length, p.config.partitions, this.shards.length));
        await run(c, sql.PLACEMENT_UPSERT, [p.name, encodePlacement(map)]);
      }
      await run(c, sql.QUEUE_UPDATE, [JSON.stringify(p.config), p.name]);
      const [row] = await select<QueueRow>(c, sql.QUEUE_SELECT, [p.name]);
      return row ? toQueue(row) : undefined;
    });
    this.router.placement.forget(p.name);
    return updated;
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.close()));
  }

  // ---- internals

  /** One enqueue attempt; `replay`: an earlier attempt may have committed on some shard. */
  private async insertOnce(jobs: NewJob[], now: number, replay: boolean): Promise<string[]> {
    const ids: string[] = new Array(jobs.length);
    const byShard = await this.router.groupByShard(jobs, (j) => j);
    const shard0 = this.shards[0]!;
    // Shard 0 holds the queue rows: lock them (shared) until every shard has committed.
    await shard0.transaction(
      async (c0, attempt) => {
        const names = [...new Set(jobs.map((j) => j.queue))];
        const present = new Set((await select<{ name: string }>(c0, sql.queuesLockShared(names.length), names)).map((r) => r.name));
        const missing = jobs.find((j) => !present.has(j.queue));
        if (missing) throw queueNotFound(missing.queue);
        await Promise.all(
          [...byShard].map(async ([shard, items]) => {
            const write = (c: Conn, retry: number) => insertOnShard(c, items, now, replay || attempt > 0 || retry > 0);
            const resolved = shard === shard0 ? await write(c0, 0) : await shard.transaction(write, { retryAmbiguousCommit: true });
            for (const [i, k] of items.entries()) ids[k.index] = resolved[i]!;
          }),
        );
      },
      // insertOnShard looks its ids up before writing again, so a replay is harmless.
      { retryAmbiguousCommit: true },
    );
    return ids;
  }

  /**
   * ACK and checkpoint: lock the jobs, decide each with transitions.ts behind the claim
   * fence (checkClaim), write every acknowledged change with one UPDATE per shard.
   * Items are decided in order, so a job named twice in a batch sees the first change.
   */
  private async applyToRunning<T extends { id: string; claimToken: string }>(
    items: T[],
    now: number,
    decide: (job: JobRecord, item: T) => JobPatch,
    fast?: (item: T) => JobPatch | undefined,
  ): Promise<OutcomeResult[]> {
    const results: OutcomeResult[] = items.map(() => ({ outcome: "not_found" }));
    await Promise.all(
      [...(await this.router.groupByShard(items, (i) => partitionOfId(i.id)))].map(async ([shard, keyed]) => {
        if (fast && (await this.applyByToken(shard, keyed, fast))) {
          for (const { index } of keyed) results[index] = { outcome: "acknowledged" };
          return;
        }
        await shard.transaction(async (c) => {
          const ids = [...new Set(keyed.map((k) => k.item.id))];
          const jobs = new Map((await select<JobRow>(c, sql.selectJobsMetaLocked(ids.length), ids)).map((row) => [row.id, toRecord(row)]));
          const tokens = new Map([...jobs.values()].map((j) => [j.id, j.claimToken]));
          const patches = new Map<string, JobPatch>();
          for (const { index, item } of keyed) {
            const job = jobs.get(item.id);
            const outcome = transitions.checkClaim(job, item.claimToken);
            if (outcome !== "acknowledged" || !job) {
              results[index] = { outcome };
              continue;
            }
            const patch = decide(job, item);
            Object.assign(job, patch);
            patches.set(job.id, { ...patches.get(job.id), ...patch });
            results[index] = { outcome, pendingAt: job.state === "pending" ? job.runAfter : undefined };
          }
          if (patches.size === 0) return;
          const changed = [...patches].map(([id, patch]) => ({ id, patch }));
          // The statement re-checks what was decided under the lock: still running, same token.
          const fence = {
            sql: `state = 'running' AND (id, claim_token) IN (${changed.map(() => "(?, ?)").join(", ")})`,
            params: changed.flatMap((c) => [c.id, tokens.get(c.id)!]),
          };
          const statement = patchManyStatement(changed, fence);
          await run(c, statement.sql, statement.params);
          // A checkpoint that keeps the job running moves its deadline: the sweep must look then.
          await addClaimChecks(c, changed.map(({ id, patch }) => ({ id, claimExpiresAt: patch.claimExpiresAt ?? 0 })));
          // Jobs that ended let the next job of their ordering key go, in this transaction.
          const promotedBy = await leaveSequences(c, [...jobs.values()].filter((j) => patches.has(j.id) && endedWithKey(j)), now);
          for (const { index, item } of keyed) {
            const promotedAt = promotedBy.get(item.id);
            if (promotedAt !== undefined && results[index]!.outcome === "acknowledged") results[index]!.promotedAt = promotedAt;
          }
        });
      }),
    );
    // Jobs back to pending (retries, checkpoints) and promoted ones may sit behind a claim's cursor.
    results.forEach((r, i) => {
      if (r.pendingAt !== undefined) this.held.noteQueued(items[i]!.id, undefined, r.pendingAt);
      if (r.promotedAt !== undefined) this.held.noteQueued(items[i]!.id, undefined, r.promotedAt);
    });
    return results;
  }

  /**
   * The ACK fast path on one shard: when every item has a non-empty token, a distinct id and
   * a job-independent patch (`fast`), one UPDATE per (claim token, patch) whose WHERE is the
   * whole fence (running, that token, no ordering key to promote). True when every item was
   * acknowledged; otherwise nothing was written (rolled back) and the caller decides exactly.
   */
  private async applyByToken<T extends { id: string; claimToken: string }>(shard: Shard, keyed: Array<Located<T>>, fast: (item: T) => JobPatch | undefined): Promise<boolean> {
    const groups = new Map<string, { token: string; patch: JobPatch; set: { sql: string; params: Param[] }; ids: string[] }>();
    // `fast` usually returns one patch object for every item: its SET clause and key part are made once.
    const clauses = new Map<JobPatch, { set: { sql: string; params: Param[] }; key: string }>();
    const seen = new Set<string>();
    for (const { item } of keyed) {
      const patch = fast(item);
      if (!patch || item.claimToken === "" || seen.has(item.id)) return false;
      seen.add(item.id);
      let clause = clauses.get(patch);
      if (!clause) {
        const set = setClause(patch);
        clauses.set(patch, (clause = { set, key: `${set.sql}\u0000${set.params.join("\u0000")}` }));
      }
      const { set } = clause;
      const key = `${item.claimToken}\u0000${clause.key}`;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { token: item.claimToken, patch, set, ids: [] }));
      group.ids.push(item.id);
    }
    const acked = await wholeOrNothing(shard, async (c) => {
      for (const g of groups.values()) {
        const n = await run(c, sql.ackGroup(g.set.sql, g.ids.length), [...g.set.params, ...g.ids, g.token]);
        if (n !== g.ids.length) throw new NotWhole();
        // Only a patch that gives the jobs a deadline needs checks (succeed, the usual one, does not).
        const deadline = g.patch.claimExpiresAt ?? 0;
        if (deadline > 0) await addClaimChecks(c, g.ids.map((id) => ({ id, claimExpiresAt: deadline })));
      }
      return true;
    });
    return acked === true;
  }

  /**
   * One DeleteJobs chunk where some job may head an ordering key: lock the rows still
   * matching, delete them, and promote the next job of each key whose head went.
   */
  private async deleteWithKeys(c: Conn, ids: string[], where: { sql: string; params: Param[] }, now: number): Promise<number> {
    const rows = await select<{ id: string; state: StoredState; ordering_key: Buffer | null }>(c, sql.lockIdKeys(ids.length, where.sql), [...ids, ...where.params]);
    if (rows.length === 0) return 0;
    const deleted = await run(c, sql.deleteIds(rows.length), rows.map((r) => r.id));
    const leaving: SequenceJob[] = rows
      .filter((r) => r.ordering_key !== null && !transitions.isTerminal(r.state))
      .map((r) => ({ id: r.id, ...parseJobId(r.id)!, orderingKey: r.ordering_key!.toString("utf8") }));
    await leaveSequences(c, leaving, now);
    return deleted;
  }

  /**
   * One RetryFailedJobs chunk with jobs that have an ordering key: lock those still
   * failed, put them back at the tail of their keys' sequences (in the chunk's order,
   * oldest failure first), then write retryFailed: pending, or waiting behind the key.
   */
  private async retryWithKeys(c: Conn, ids: string[], p: { attemptsAllowed: number; runAfter: number; now: number }): Promise<number> {
    const keyed = await select<{ id: string; queue: string; part: number; ordering_key: Buffer | null }>(c, sql.lockFailedKeyed(ids.length), ids);
    const order = new Map(ids.map((id, i) => [id, i]));
    const joining: SequenceJob[] = keyed
      .filter((r) => r.ordering_key !== null)
      .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
      .map((r) => ({ id: r.id, queue: r.queue, partition: Number(r.part), orderingKey: r.ordering_key!.toString("utf8") }));
    const waiting = await joinSequences(c, joining);
    let retried = 0;
    for (const busy of [false, true]) {
      const chosen = ids.filter((id) => waiting.has(id) === busy);
      if (chosen.length === 0) continue;
      const set = setClause(transitions.retryFailed(p.attemptsAllowed, p.runAfter, p.now, busy));
      retried += await run(c, sql.retryFailedIds(set.sql, chosen.length), [...set.params, ...chosen]);
    }
    return retried;
  }

  /** Writes each job's patch with one UPDATE and returns the jobs as they now are. */
  private async applyPatches(c: Conn, changes: Array<{ job: JobRecord; patch: JobPatch }>, fence = { sql: "state = 'running'", params: [] as Param[] }): Promise<JobRecord[]> {
    if (changes.length === 0) return [];
    const statement = patchManyStatement(
      changes.map((ch) => ({ id: ch.job.id, patch: ch.patch })),
      fence,
    );
    await run(c, statement.sql, statement.params);
    return changes.map((ch) => ({ ...ch.job, ...ch.patch }));
  }

  private async holdsLease(c: Conn, queue: string, partition: number, epoch: number): Promise<boolean> {
    const [row] = await select<{ epoch: number | string }>(c, sql.LEASE_EPOCH_SHARED, [queue, partition]);
    return row !== undefined && Number(row.epoch) === epoch;
  }

  /** The shard of a partition (a cache hit on the hot path). */
  /** Placement of queues on shard 0 (one query): their partition counts and stored maps. */
  private async loadPlacement(queues: string[]): Promise<Map<string, StoredQueuePlacement>> {
    const rows = await this.shards[0]!.session((c) => select<{ name: string; config: string; shards: string | null }>(c, sql.queuePlacements(queues.length), queues));
    return new Map(
      rows.map((r) => [r.name, { partitions: (JSON.parse(r.config) as QueueConfig).partitions, map: r.shards === null ? undefined : decodePlacement(r.shards) }]),
    );
  }
}

/** A fast path matched fewer rows than it was given: its transaction is rolled back and the exact path runs. */
class NotWhole extends Error {}

/** Runs a fast path in one transaction; undefined (rolled back, nothing written) when it threw NotWhole. */
async function wholeOrNothing<T>(shard: Shard, work: (c: Conn) => Promise<T>): Promise<T | undefined> {
  try {
    return await shard.transaction(work);
  } catch (err) {
    if (err instanceof NotWhole) return undefined;
    throw err;
  }
}

/** The fields transitions that do not depend on the job read from it (attempt counters move in SQL, see sql.startGroup). */
const NO_JOB = { attempt: 0, attemptsRemaining: 0, customStatus: "" } as JobRecord;

/** Groups of plans sharing one set of hand-out values, at most this many per fast start. */
const START_GROUPS_MAX = 4;

/** handOut without the attempt counters, which sql.startGroup moves in SQL. */
function startPatch(plan: HandOutPlan, now: number): JobPatch {
  const { attempt: _a, attemptsRemaining: _r, ...patch } = transitions.handOut(NO_JOB, plan, now);
  return patch;
}

/**
 * The plans by equal (claim token, expiry, retry delay), when that makes few groups and no
 * job is named twice; otherwise undefined (the exact path decides per job).
 */
function startGroups(plans: HandOutPlan[]): Array<{ plan: HandOutPlan; ids: string[] }> | undefined {
  const groups = new Map<string, { plan: HandOutPlan; ids: string[] }>();
  const seen = new Set<string>();
  for (const plan of plans) {
    if (seen.has(plan.id)) return undefined;
    seen.add(plan.id);
    const key = `${plan.claimToken}\u0000${plan.claimExpiresAt}\u0000${plan.retryDelayMs}`;
    let group = groups.get(key);
    if (!group) {
      if (groups.size >= START_GROUPS_MAX) return undefined;
      groups.set(key, (group = { plan, ids: [] }));
    }
    group.ids.push(plan.id);
  }
  return [...groups.values()];
}

/** A job with an ordering key that has just ended leaves its key's sequence. */
function endedWithKey(job: JobRecord): boolean {
  return job.orderingKey !== "" && transitions.isTerminal(job.state);
}

function toQueue(row: QueueRow): QueueRecord {
  return { name: row.name, config: JSON.parse(row.config) as QueueConfig, createdAt: Number(row.created_at) };
}
