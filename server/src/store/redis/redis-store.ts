/**
 * The Redis store (ioredis + one Lua script per store method, see ./lua). Each --store URL
 * is one shard: a standalone Redis server (or a primary with replicas), not a Cluster.
 *
 * - Every partition's keys share one hash tag, and the scripts that work on one partition
 *   (claim, start, release, lease, scan) touch that slot only. Batch scripts (insert, ack,
 *   checkpoint, lookup, claim sweep) work on every partition of their shard in one call.
 * - Hot path, one script call per shard: an enqueue batch, a broker claim of N jobs, a
 *   hand-out batch, an ACK batch. Claims are O(k log n): sorted sets per partition and
 *   priority, scored by run_after, members ordered by a zero-padded seq.
 * - Sweeps cost O(work): the claim sweep reads a per-shard zset of claim checks (one per
 *   hand-out with running jobs left, lua/include/job.lua) by due time; retention reads
 *   per-partition lists of succeeded jobs (one entry per ACK batch) and zsets of failed
 *   jobs by finishing time.
 * - Admin calls (scan, count, delete, retry) walk a per-partition index in bounded chunks.
 * - Bodies are Buffers end to end; scripts run by EVALSHA (defineCommand).
 * Redis must run with maxmemory-policy noeviction (checked at open): an evicted job key
 * is a silently lost job. See docs/redis.md for durability settings.
 */
import { Redis } from "ioredis";
import { queueNotFound } from "../../domain/errors.js";
import { compareForDequeue, compareForScan, type JobRecord, type NewJob, withoutBody } from "../../domain/job-record.js";
import type { QueueConfig } from "../../domain/queue-config.js";
import { type CheckpointInput, claimIntoBuffer, type FailureInput, type HandOutPlan } from "../../domain/transitions.js";
import type { BrokerEntry, Lease, OutcomeResult, QueueRecord, QueueStatsRecord, Store } from "../store.js";
import { decodeJob, decodeJobs, decodeOutcomes, decodeStored, encodeNewJob, text } from "./codec.js";
import { decodePlacement, encodePlacement, placePartitions, type StoredQueuePlacement } from "../placement.js";
import { partitionOfId, ShardRouter } from "../shard-router.js";
import { Keys } from "./keys.js";
import { defineScripts, runScript, type ScriptArg, type ScriptName } from "./scripts.js";
import { checkShards, connect } from "./shard-check.js";
import { CHUNK, filterArgs, type PartitionScript, walk } from "./walk.js";
import { type JobFilter, type ScanCursor, matchesBody } from "../../domain/job-filter.js";

export interface RedisStoreOptions {
  /** One redis://host:port[/db] URL per shard; keep the order, add new shards at the end. */
  urls: string[];
  /** Prefix of every key (default "rl"); tests use a random one per store. */
  prefix?: string;
  /** Refuse to open unless maxmemory-policy is noeviction (default true). */
  requireNoEviction?: boolean;
  /** Told about connection errors of shard `shard` (ioredis reconnects by itself). */
  onError?: (err: Error, shard: number) => void;
}

export async function openRedisStore(o: RedisStoreOptions): Promise<RedisStore> {
  if (o.urls.length === 0) throw new Error("redis store: give at least one redis:// URL");
  const prefix = o.prefix ?? "rl";
  // Braces would break the hash tags every key relies on.
  if (!/^[A-Za-z0-9_:.-]{1,64}$/.test(prefix)) throw new Error(`redis store: key prefix "${prefix}" may hold only letters, digits and _ : . -`);
  const keys = new Keys(prefix);
  // maxRetriesPerRequest: while Redis is down a call fails after a few reconnection
  // attempts (the API answers `unavailable`) instead of hanging for a minute.
  const clients = o.urls.map((url) => new Redis(url, { enableAutoPipelining: true, lazyConnect: true, maxRetriesPerRequest: 3 }));
  for (const [i, client] of clients.entries()) {
    // Without a listener ioredis prints "Unhandled error event" for every failed reconnect.
    client.on("error", (err: Error) => o.onError?.(err, i));
  }
  let legacyShards: number;
  try {
    await Promise.all(clients.map((c, i) => connect(c, i, o.urls[i]!)));
    for (const client of clients) defineScripts(client);
    legacyShards = await checkShards(clients, keys, o.requireNoEviction ?? true);
  } catch (err) {
    clients.forEach((c) => c.disconnect());
    throw err;
  }
  return new RedisStore(clients, keys, legacyShards);
}

/** Expired registrations are kept this long (for debugging) before brokerList drops them. */
const REGISTRY_KEEP_DEAD_MS = 60 * 60_000;

export class RedisStore implements Store {
  readonly name = "redis";
  readonly defaultBufferSize = 1000;
  private sweepStart = 0;
  /** job_scan.lua on a partition, for the admin walks (walk.ts). */
  private readonly scan: PartitionScript = (queue, partition, name, args) => this.run(queue, partition, name, [this.keys.all(queue, partition)], args);

  /** Which shard holds each partition (../shard-router.ts): a cache hit on the hot path. */
  private readonly router: ShardRouter<Redis>;

  /** @param legacyShards the shard count of queues created before placements were stored */
  constructor(
    private readonly shards: Redis[],
    private readonly keys: Keys,
    legacyShards: number = shards.length,
  ) {
    this.router = new ShardRouter(shards, (queues) => this.loadPlacement(queues), legacyShards);
  }

  // ---- broker registry (shard 0: one hash, broker id → JSON {url, expiresAt})

  async brokerHeartbeat(p: { id: string; url: string; ttlMs: number; now: number }): Promise<void> {
    await this.shards[0]!.hset(this.keys.brokers(), p.id, JSON.stringify({ url: p.url, expiresAt: p.now + p.ttlMs }));
  }

  async brokerList(p: { now: number }): Promise<BrokerEntry[]> {
    const all = await this.shards[0]!.hgetall(this.keys.brokers());
    const live: BrokerEntry[] = [];
    const dead: string[] = [];
    for (const [id, value] of Object.entries(all)) {
      const { url, expiresAt } = JSON.parse(value) as { url: string; expiresAt: number };
      if (expiresAt > p.now) live.push({ id, url, expiresAt });
      else if (expiresAt < p.now - REGISTRY_KEEP_DEAD_MS) dead.push(id);
    }
    // Long-dead entries are dropped here so the hash stays as small as the cluster.
    if (dead.length > 0) await this.shards[0]!.hdel(this.keys.brokers(), ...dead);
    return live.sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async brokerLeave(p: { id: string }): Promise<void> {
    await this.shards[0]!.hdel(this.keys.brokers(), p.id);
  }

  // ---- leases

  async leaseAcquire(p: { queue: string; partition: number; owner: string; ttlMs: number; now: number }): Promise<Lease | undefined> {
    const reply = (await this.run(p.queue, p.partition, "lease_acquire", [this.keys.lease(p.queue, p.partition), this.keys.marker(p.queue, p.partition), this.keys.epochs()], [p.owner, p.ttlMs, p.now])) as
      | [number, Buffer]
      | null;
    if (!reply) return undefined;
    return { queue: p.queue, partition: p.partition, owner: p.owner, epoch: reply[0], expiresAt: Number(text(reply[1])) };
  }

  async leaseRelease(p: { queue: string; partition: number; owner: string; epoch: number }): Promise<void> {
    await this.run(p.queue, p.partition, "lease_release", [this.keys.lease(p.queue, p.partition)], [p.owner, p.epoch]);
  }

  // ---- jobs

  async jobClaimExpire(p: { now: number; limit: number }): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
    // Shards one after another, sharing the limit; the start rotates so none starves.
    const expired: JobRecord[] = [];
    let nextExpiryAt: number | undefined;
    const start = this.sweepStart++ % this.shards.length;
    for (let k = 0; k < this.shards.length && expired.length < p.limit; k++) {
      const shard = this.shards[(start + k) % this.shards.length]!;
      const [next, ...records] = (await runScript(shard, "job_claim_expire", [this.keys.claimChecks()], [this.keys.prefix, p.now, p.limit - expired.length])) as unknown[];
      expired.push(...decodeJobs(records));
      const at = text(next);
      if (at !== "" && (nextExpiryAt === undefined || Number(at) < nextExpiryAt)) nextExpiryAt = Number(at);
    }
    return { expired, nextExpiryAt };
  }

  async jobClaimMany(p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number }): Promise<JobRecord[]> {
    const keys = [this.keys.lease(p.queue, p.partition), this.keys.counters(p.queue, p.partition)];
    const reply = (await this.run(p.queue, p.partition, "job_claim_many", keys, [p.queue, p.partition, p.epoch, p.limit, p.now, p.maxBytes ?? ""])) as Buffer[];
    if (reply.length < 2) return [];
    // The ids, then each job as it was read (pending): the claim's patch applies to our copy as it did to the store's.
    const ids = reply[0]!.toString("latin1").split(" ");
    const patch = claimIntoBuffer(p.epoch);
    const where = { queue: p.queue, partition: p.partition };
    return ids.map((id, i) => Object.assign(decodeStored(id, reply[i + 1]!, 0, false, where), patch));
  }

  async jobCheckpointMany(p: { items: Array<CheckpointInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return this.acknowledge("job_checkpoint_many", p.items, p.now, (items) =>
      items.flatMap((c) => [
        c.id,
        c.claimToken,
        c.claimExpiresAt,
        c.newBody === undefined ? "0" : "1",
        c.newBody ?? "",
        c.moveToPending ? "1" : "0",
        c.runAfter,
        c.attemptsAllowed,
        c.customStatus,
      ]),
    );
  }

  async jobCompleteMany(p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number }): Promise<OutcomeResult[]> {
    // The hot ACK: per run of items sharing a token and status, those two and the ids joined.
    return this.acknowledge("job_complete_many", p.items, p.now, (items) =>
      runsOf(items, (a, b) => a.claimToken === b.claimToken && a.customStatus === b.customStatus).flatMap((run) => [
        run[0]!.claimToken,
        run[0]!.customStatus,
        run.map((c) => c.id).join(" "),
      ]),
    );
  }

  async jobCount(p: { queue: string; filter: JobFilter; now: number }): Promise<number> {
    const f = p.filter;
    if (f.priority === undefined && f.future === undefined && f.bodyRegex === undefined) {
      // State counts are kept per partition: no walk.
      const stats = await this.stats(p.queue, p.now);
      if (!stats) return 0;
      return f.state === undefined ? stats.pending + stats.running + stats.succeeded + stats.failed : stats[f.state];
    }
    let count = 0;
    for (const partition of await this.partitions(p.queue)) {
      await walk(this.scan, { queue: p.queue, partition, filter: f, now: p.now, mode: f.bodyRegex ? "full" : "count", want: Infinity }, (n, jobs) => {
        count += f.bodyRegex ? jobs.filter((j) => matchesBody(j, f)).length : n;
        return true;
      });
    }
    return count;
  }

  async jobDeleteFinished(p: { queue: string; succeededBefore: number; failedBefore: number; limit: number }): Promise<number> {
    let deleted = 0;
    for (const [shard, partitions] of await this.router.byShard(p.queue, await this.partitions(p.queue))) {
      if (deleted >= p.limit) break;
      const args = [this.keys.prefix, p.queue, p.succeededBefore, p.failedBefore, p.limit - deleted, ...partitions];
      deleted += (await runScript(shard, "job_delete_finished", [this.keys.claimChecks()], args)) as number;
    }
    return deleted;
  }

  async jobDeleteMany(p: { queue: string; filter: JobFilter; limit: number; now: number }): Promise<number> {
    const f = p.filter;
    let deleted = 0;
    for (const partition of await this.partitions(p.queue)) {
      if (deleted >= p.limit) break;
      await walk(this.scan, { queue: p.queue, partition, filter: f, now: p.now, mode: f.bodyRegex ? "full" : "ids", want: p.limit - deleted }, async (_, jobs, ids) => {
        const chosen = f.bodyRegex ? jobs.filter((j) => matchesBody(j, f)).map((j) => j.id) : ids;
        const doomed = chosen.slice(0, p.limit - deleted);
        if (doomed.length > 0) {
          const args = [p.queue, partition, p.now, ...filterArgs(f), ...doomed];
          deleted += (await this.run(p.queue, partition, "job_delete_ids", [this.keys.all(p.queue, partition)], args)) as number;
        }
        return deleted < p.limit;
      });
    }
    return deleted;
  }

  async jobFailMany(p: { items: Array<FailureInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return this.acknowledge("job_fail_many", p.items, p.now, (items) => items.flatMap((f) => [f.id, f.claimToken, f.customStatus, f.retryDelayMs ?? "", f.noRetry ? "1" : "0"]));
  }

  async jobGetMany(p: { ids: string[]; bodies?: boolean }): Promise<Array<JobRecord | undefined>> {
    const found: Array<JobRecord | undefined> = p.ids.map(() => undefined);
    await Promise.all(
      [...(await this.router.groupByShard(p.ids, partitionOfId))].map(async ([shard, located]) => {
        const args = [this.keys.prefix, p.bodies === false ? "0" : "1", ...located.map((l) => l.item)];
        const replies = (await runScript(shard, "job_get_many", [this.keys.claimChecks()], args)) as unknown[];
        replies.forEach((reply, k) => {
          if (reply) found[located[k]!.index] = decodeJob(reply, p.bodies === false);
        });
      }),
    );
    return found;
  }

  async jobInsertMany(p: { jobs: NewJob[]; now: number }): Promise<string[]> {
    const groups = await this.router.groupByShard(p.jobs, (j) => j);
    if (groups.size > 1) {
      // All or nothing across shards: check every queue before any shard writes. (Each
      // script checks its partitions again, atomically with its writes.)
      const names = [...new Set(p.jobs.map((j) => j.queue))];
      const configs = await this.shards[0]!.hmget(this.keys.queues(), ...names);
      const missing = names.find((_, i) => configs[i] === null);
      if (missing !== undefined) throw queueNotFound(missing);
    }
    const ids: string[] = p.jobs.map((j) => j.id);
    await Promise.all(
      [...groups].map(async ([shard, located]) => {
        const args: ScriptArg[] = [this.keys.prefix];
        for (const { item: j } of located) args.push(j.id, encodeNewJob(j, p.now), j.body);
        let notInserted: Buffer[];
        try {
          notInserted = (await runScript(shard, "job_insert_many", [this.keys.claimChecks()], args)) as Buffer[];
        } catch (err) {
          const match = /QUEUE_NOT_FOUND (\w+)/.exec(err instanceof Error ? err.message : "");
          if (match) throw queueNotFound(match[1]!);
          throw err;
        }
        // Jobs whose idempotency key was live: their position in this call and the live job's id.
        for (let k = 0; k < notInserted.length; k += 2) ids[located[Number(notInserted[k]) - 1]!.index] = text(notInserted[k + 1]);
      }),
    );
    return ids;
  }

  async jobNextDueAt(p: { queue: string; partition: number }): Promise<number | undefined> {
    const reply = await this.run(p.queue, p.partition, "job_next_due_at", [this.keys.counters(p.queue, p.partition)], [p.queue, p.partition]);
    return reply === null ? undefined : Number(text(reply));
  }

  async jobPeekMany(p: { queue: string; limit: number; now: number }): Promise<JobRecord[]> {
    const replies = await Promise.all(
      [...(await this.router.byShard(p.queue, await this.partitions(p.queue)))].map(([shard, partitions]) =>
        runScript(shard, "job_peek_many", [this.keys.claimChecks()], [this.keys.prefix, p.queue, p.limit, p.now, ...partitions]),
      ),
    );
    return replies.flatMap((reply) => decodeJobs(reply)).sort(compareForDequeue).slice(0, p.limit);
  }

  async jobReleaseBuffered(p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number }): Promise<number> {
    if (p.ids !== undefined && p.ids.length === 0) return 0;
    const args = [p.queue, p.partition, p.epoch ?? "", p.belowEpoch ?? "", ...(p.ids ?? [])];
    return (await this.run(p.queue, p.partition, "job_release_buffered", [this.keys.buffered(p.queue, p.partition)], args)) as number;
  }

  async jobRetryFailed(p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number }): Promise<number> {
    let retried = 0;
    for (const partition of await this.partitions(p.queue)) {
      for (let offset = 0; retried < p.limit; ) {
        const args = [p.queue, partition, p.now, p.priority ?? 0, p.attemptsAllowed, p.runAfter, offset, CHUNK, p.limit - retried];
        const [n, skipped, done] = (await this.run(p.queue, partition, "job_retry_failed", [this.keys.failed(p.queue, partition)], args)) as number[];
        retried += n!;
        offset += skipped!;
        if (done) break;
      }
    }
    return retried;
  }

  async jobScan(p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number }): Promise<JobRecord[]> {
    // Each partition's first `limit` matches after the cursor hold the global first `limit`.
    const pages = await Promise.all(
      (await this.partitions(p.queue)).map(async (partition) => {
        const page: JobRecord[] = [];
        // Without bodies the script sends each job's attributes only, unless a body regex needs them.
        const mode = p.bodies === false && !p.filter.bodyRegex ? "meta" : "full";
        await walk(this.scan, { queue: p.queue, partition, filter: p.filter, now: p.now, cursor: p.cursor, mode, want: p.limit }, (_, jobs) => {
          for (const job of jobs) if (matchesBody(job, p.filter)) page.push(p.bodies === false && mode === "full" ? withoutBody(job) : job);
          return page.length < p.limit;
        });
        return page;
      }),
    );
    return pages
      .flat()
      .sort(compareForScan)
      .slice(0, p.limit);
  }

  async jobStartMany(p: { queue: string; partition: number; epoch: number; plans: HandOutPlan[]; now: number }): Promise<string[]> {
    // One script call per run of plans sharing a claim token and expiry (the broker's
    // hand-out batches are one run): those two travel once, not once per job.
    const started: string[] = [];
    // A token too long for its slot (limits.claimTokenMaxBytes) fails the script at its
    // first job, before any write: a run shares one token.
    for (const run of runsOf(
      p.plans.filter((plan) => joinable(plan.id)), // (the rest name no job: not started)
      (a, b) => a.claimToken === b.claimToken && a.claimExpiresAt === b.claimExpiresAt,
    )) {
      const args: ScriptArg[] = [p.queue, p.partition, p.epoch, p.now, run[0]!.claimToken, run[0]!.claimExpiresAt];
      // The ids travel joined, per run of equal retry delays (a batch's are mostly one).
      const delays = runsOf(run, (a, b) => a.retryDelayMs === b.retryDelayMs);
      for (const plans of delays) args.push(plans[0]!.retryDelayMs, plans.map((plan) => plan.id).join(" "));
      const flags = ((await this.run(p.queue, p.partition, "job_start_many", [this.keys.lease(p.queue, p.partition), this.keys.claimChecks()], args)) as Buffer).toString("latin1");
      run.forEach((plan, i) => flags[i] === "1" && started.push(plan.id));
    }
    return started;
  }

  // ---- queues

  async queueCreate(p: { name: string; config: QueueConfig; now: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    // Markers first: a queue whose record exists always has its partitions (a retry of
    // a half-done create writes them again; they are idempotent). An existing queue keeps
    // its own partition count and placement; a new one is placed over the current shard count.
    const existing = await this.queueGet({ name: p.name });
    this.router.placement.forget(p.name);
    const stored = existing && (await this.router.placement.maps(new Map([[p.name, existing.config.partitions - 1]]))).get(p.name);
    const map = stored ?? placePartitions(p.name, 0, p.config.partitions, this.shards.length);
    await this.writeMarkers(p.name, map, Array.from({ length: (existing ?? p).config.partitions }, (_, i) => i));
    const [created, config, createdAt] = (await runScript(this.shards[0]!, "queue_create", [this.keys.queues(), this.keys.queueCreated(), this.keys.placement()], [
      this.keys.prefix,
      p.name,
      JSON.stringify(p.config),
      p.now,
      encodePlacement(map),
    ])) as [number, Buffer, Buffer, unknown];
    // If another server created it first (perhaps over another shard count), its placement
    // won, and its markers were written before its record: read it on next use.
    this.router.placement.forget(p.name);
    return { queue: { name: p.name, config: JSON.parse(text(config)) as QueueConfig, createdAt: Number(text(createdAt)) }, created: created === 1 };
  }

  async queueDelete(p: { name: string }): Promise<boolean> {
    const record = await this.queueGet(p);
    if (!record) return false;
    // The map as stored now, not as cached: the queue may have been re-created elsewhere.
    this.router.placement.forget(p.name);
    // Partitions first, the record and its placement last: an interrupted delete can be repeated.
    await Promise.all(
      Array.from({ length: record.config.partitions }, async (_, partition) => {
        const args = [p.name, partition, CHUNK];
        while (((await this.run(p.name, partition, "queue_purge", [this.keys.all(p.name, partition)], args)) as number) > 0);
      }),
    );
    await this.shards[0]!.multi().hdel(this.keys.queues(), p.name).hdel(this.keys.queueCreated(), p.name).hdel(this.keys.placement(), p.name).exec();
    this.router.placement.forget(p.name);
    return true;
  }

  async queueGet(p: { name: string }): Promise<QueueRecord | undefined> {
    const [config, createdAt] = await Promise.all([this.shards[0]!.hget(this.keys.queues(), p.name), this.shards[0]!.hget(this.keys.queueCreated(), p.name)]);
    if (config === null) return undefined;
    return { name: p.name, config: JSON.parse(config) as QueueConfig, createdAt: Number(createdAt ?? 0) };
  }

  async queueList(): Promise<QueueRecord[]> {
    const [configs, created] = await Promise.all([this.shards[0]!.hgetall(this.keys.queues()), this.shards[0]!.hgetall(this.keys.queueCreated())]);
    return Object.keys(configs)
      .sort()
      .map((name) => ({ name, config: JSON.parse(configs[name]!) as QueueConfig, createdAt: Number(created[name] ?? 0) }));
  }

  async queueStats(p: { name: string; now: number }): Promise<QueueStatsRecord> {
    const stats = await this.stats(p.name, p.now);
    if (!stats) throw queueNotFound(p.name);
    return stats;
  }

  async queueUpdate(p: { name: string; config: QueueConfig }): Promise<QueueRecord | undefined> {
    const current = await this.queueGet({ name: p.name });
    if (!current) return undefined;
    let placement = "";
    if (p.config.partitions > current.config.partitions) {
      // Added partitions are placed over the current shard count (so they can use added
      // shards); the existing ones stay where they are.
      this.router.placement.forget(p.name);
      const map = (await this.router.placement.maps(new Map([[p.name, current.config.partitions - 1]]))).get(p.name)?.slice(0, current.config.partitions);
      if (!map) return undefined;
      map.push(...placePartitions(p.name, map.length, p.config.partitions, this.shards.length));
      placement = encodePlacement(map);
      // Markers of added partitions first, as in queueCreate: the record never names a partition that does not exist.
      const added = Array.from({ length: p.config.partitions - current.config.partitions }, (_, i) => current.config.partitions + i);
      await this.writeMarkers(p.name, map, added);
    }
    const createdAt = await runScript(this.shards[0]!, "queue_update", [this.keys.queues(), this.keys.queueCreated(), this.keys.placement()], [
      this.keys.prefix,
      p.name,
      JSON.stringify(p.config),
      placement,
    ]);
    this.router.placement.forget(p.name);
    if (createdAt === null) return undefined;
    return { name: p.name, config: p.config, createdAt: Number(text(createdAt)) };
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((c) => c.quit().catch(() => c.disconnect())));
  }

  // ---- internals

  /** Placement of queues on shard 0 (one atomic read): their partition counts and stored maps. */
  private async loadPlacement(queues: string[]): Promise<Map<string, StoredQueuePlacement>> {
    const replies = await this.shards[0]!.multi().hmget(this.keys.queues(), ...queues).hmget(this.keys.placement(), ...queues).exec();
    const [configs, maps] = (replies ?? []).map(([err, value]) => {
      if (err) throw err;
      return value as Array<string | null>;
    });
    const found = new Map<string, StoredQueuePlacement>();
    queues.forEach((queue, i) => {
      const config = configs?.[i];
      if (config == null) return;
      const map = maps?.[i];
      found.set(queue, { partitions: (JSON.parse(config) as QueueConfig).partitions, map: map == null ? undefined : decodePlacement(map) });
    });
    return found;
  }

  private async writeMarkers(queue: string, map: number[], partitions: number[]): Promise<void> {
    await Promise.all(
      [...this.router.byShardIn(map, queue, partitions)].map(([shard, list]) => {
        const multi = shard.multi();
        for (const partition of list) multi.set(this.keys.marker(queue, partition), "1");
        return multi.exec();
      }),
    );
  }

  /**
   * ACK-style batches: one script call per shard, its items encoded by `encode` (after the
   * prefix and `now`), one outcome back per item. Ids that name no partition, or that
   * cannot travel in a space-joined list, are not_found without being sent.
   */
  private async acknowledge<T extends { id: string }>(name: ScriptName, items: T[], now: number, encode: (items: T[]) => ScriptArg[]): Promise<OutcomeResult[]> {
    const results: OutcomeResult[] = items.map(() => ({ outcome: "not_found" }));
    await Promise.all(
      [...(await this.router.groupByShard(items, (i) => partitionOfId(i.id)))].map(async ([shard, located]) => {
        const sent = located.filter(({ item }) => joinable(item.id));
        if (sent.length === 0) return;
        const args: ScriptArg[] = [this.keys.prefix, now, ...encode(sent.map(({ item }) => item))];
        const outcomes = decodeOutcomes((await runScript(shard, name, [this.keys.claimChecks()], args)) as Buffer);
        outcomes.forEach((outcome, k) => (results[sent[k]!.index] = outcome));
      }),
    );
    return results;
  }

  /** The queue's partition numbers (none for an unknown queue). */
  private async partitions(queue: string): Promise<number[]> {
    const record = await this.queueGet({ name: queue });
    return Array.from({ length: record?.config.partitions ?? 0 }, (_, i) => i);
  }

  /** Runs a partition's script on its shard; ARGV starts with the prefix. */
  private async run(queue: string, partition: number, name: ScriptName, keys: string[], args: ScriptArg[]): Promise<unknown> {
    return runScript(await this.router.shardOf(queue, partition), name, keys, [this.keys.prefix, ...args]);
  }

  private async stats(queue: string, now: number): Promise<QueueStatsRecord | undefined> {
    const record = await this.queueGet({ name: queue });
    if (!record) return undefined;
    const partitions = Array.from({ length: record.config.partitions }, (_, i) => i);
    const replies = await Promise.all(
      [...(await this.router.byShard(queue, partitions))].map(async ([shard, list]) =>
        (await runScript(shard, "queue_stats", [this.keys.claimChecks()], [this.keys.prefix, queue, now, ...list])) as [number, number, number, number, number, number, Buffer],
      ),
    );
    const total = { pending: 0, scheduled: 0, running: 0, succeeded: 0, failed: 0, oldestPendingAgeMs: 0 };
    let oldest: number | undefined;
    for (const [p, b, r, s, f, scheduled, oldestDue] of replies) {
      total.pending += p + b;
      total.running += r;
      total.succeeded += s;
      total.failed += f;
      total.scheduled += scheduled;
      const at = text(oldestDue);
      if (at !== "") oldest = Math.min(oldest ?? Infinity, Number(at));
    }
    total.oldestPendingAgeMs = oldest === undefined ? 0 : Math.max(0, now - oldest);
    return total;
  }

}

/** Whether an id can travel in a space-joined list (idAt in keys.lua); one that cannot names no job anyway. */
function joinable(id: string): boolean {
  return id !== "" && !id.includes(" ");
}

/** Consecutive runs of items that `same` says belong together, in order. */
function runsOf<T>(items: T[], same: (a: T, b: T) => boolean): T[][] {
  const runs: T[][] = [];
  for (const item of items) {
    const last = runs[runs.length - 1];
    if (last && same(last[0]!, item)) last.push(item);
    else runs.push([item]);
  }
  return runs;
}
