/**
 * The Redis store (ioredis + one Lua script per store method, see ./lua). Each --store URL
 * is one shard: a standalone Redis server (or a primary with replicas); or one
 * redis+cluster:// URL names a Redis Cluster, whose shards are hash tags (cluster.ts).
 *
 * - Every partition's keys share one hash tag, and the scripts that work on one partition
 *   (claim, start, release, lease, scan) touch that slot only. Batch scripts (insert, ack,
 *   checkpoint, lookup, claim sweep) work on every partition of their shard in one call.
 * - Hot path, one script call per shard: an enqueue batch, a broker claim of N jobs, a
 *   hand-out batch, an ACK batch. Claims are O(k log n): sorted sets per partition and
 *   priority, scored by run_after, members ordered by a zero-padded seq.
 * - Sweeps cost O(work): the claim sweep reads a per-shard zset of claim checks (one per
 *   hand-out with running jobs left, lua/include/ledgers.lua) by due time; retention reads
 *   per-partition lists of succeeded jobs (one entry per ACK batch) and zsets of failed
 *   jobs by finishing time.
 * - Admin calls (scan, count, delete, retry) walk a per-partition index in bounded chunks.
 * - Bodies are Buffers end to end; scripts run by EVALSHA (defineCommand).
 * Redis must run with maxmemory-policy noeviction (checked at open): an evicted job key
 * is a silently lost job. See docs/redis.md for durability settings.
 *
 * The class only makes the store's RedisContext (redis-context.ts): each Store method hands
 * it to a module function (../delegating-store.ts), one module per concern: broker-registry.ts,
 * leases.ts, queue-admin.ts, insert-jobs.ts (enqueue), hand-out.ts (claim, start, release),
 * running-writes.ts (ACK, checkpoint, claim expiry), bulk-admin.ts (GC, delete, retry) and
 * job-reads.ts. Store.workflows is workflows.ts, Store.schedules schedules.ts.
 */
import { Redis } from "ioredis";
import { DelegatingStore, type StoreFunctions } from "../delegating-store.js";
import { ShardRouter } from "../shard-router.js";
import * as brokers from "./broker-registry.js";
import * as bulk from "./bulk-admin.js";
import { CLUSTER_SCHEMES, openCluster } from "./cluster.js";
import * as handOut from "./hand-out.js";
import * as insert from "./insert-jobs.js";
import * as reads from "./job-reads.js";
import { Keys } from "./keys.js";
import * as leases from "./leases.js";
import * as queues from "./queue-admin.js";
import { type RedisContext, runOnPartition } from "./redis-context.js";
import * as running from "./running-writes.js";
import { RedisSchedules } from "./schedules.js";
import { defineScripts } from "./scripts.js";
import { checkShards, connect } from "./shard-check.js";
import * as tokens from "./tokens.js";
import { RedisWorkflows } from "./workflows.js";

export interface RedisStoreOptions {
  /** One redis://host:port[/db] URL per shard; keep the order, add new shards at the end. Or one redis+cluster:// URL. */
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
  if (!/^[A-Za-z0-9_:.-]{1,64}$/.test(prefix))
    throw new Error(`redis store: key prefix "${prefix}" may hold only letters, digits and _ : . -`);
  const keys = new Keys(prefix);
  if (o.urls.some((url) => CLUSTER_SCHEMES.some((scheme) => url.startsWith(scheme))))
    return openClusterStore(o, prefix);
  // maxRetriesPerRequest: while Redis is down a call fails after a few reconnection
  // attempts (the API answers `unavailable`) instead of hanging for a minute.
  // No auto-pipelining: ioredis holds each command until setImmediate to batch it with
  // others, which on a busy event loop delays every round trip by a whole turn of the loop;
  // the scripts batch jobs already. Pickup at 2,000 jobs/s went from p50/p99 2.5/44–64 ms
  // to 1.1–1.3/12–32 ms, and Enqueue and processed rates did not fall (docs/benchmarks.md).
  const clients = o.urls.map(
    (url) => new Redis(url, { enableAutoPipelining: false, lazyConnect: true, maxRetriesPerRequest: 3 }),
  );
  for (const [i, client] of clients.entries()) {
    // Without a listener ioredis prints "Unhandled error event" for every failed reconnect.
    client.on("error", (err: Error) => o.onError?.(err, i));
  }
  let legacyShards: number;
  try {
    await Promise.all(clients.map((c, i) => connect(c, i, o.urls[i]!)));
    for (const client of clients) defineScripts(client);
    legacyShards = await checkShards(clients, () => keys, o.requireNoEviction ?? true);
  } catch (err) {
    for (const c of clients) c.disconnect();
    throw err;
  }
  return new RedisStore(clients, () => keys, legacyShards);
}

/** A Redis Cluster (cluster.ts): one URL, its virtual shards checked as --store shards are. */
async function openClusterStore(o: RedisStoreOptions, prefix: string): Promise<RedisStore> {
  if (o.urls.length > 1)
    throw new Error("redis store: give one redis+cluster:// URL (list every seed node in it: host:port,host:port)");
  const { cluster, shards, keys } = await openCluster(o.urls[0]!, prefix, {
    requireNoEviction: o.requireNoEviction ?? true,
    onError: o.onError,
  });
  try {
    const keysOn = (shard: Redis) => keys.get(shard)!;
    // Eviction was checked on every master above. A shard's keys carry a tag this store
    // chose and recorded (cluster.ts), so no one else's data can be under them: no SCAN of a
    // whole node for each new shard.
    const legacyShards = await checkShards(shards, keysOn, false, async () => false);
    return new RedisStore(shards, keysOn, legacyShards, [cluster]);
  } catch (err) {
    cluster.disconnect();
    throw err;
  }
}

/** Each Store method's module function (../delegating-store.ts hands it the context). */
const functions: StoreFunctions<RedisContext> = {
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

export class RedisStore extends DelegatingStore<RedisContext> {
  readonly name = "redis";
  readonly defaultBufferSize = 1000;
  /** One script claims and hands out (job_claim_many.lua). */
  protected override readonly claimStarts = true;

  /** The shards, keys and routing, shared by the modules this class delegates to. */
  protected readonly ctx: RedisContext;
  /** The key names on shard 0 (tests read its prefix). */
  private readonly keys: Keys;
  /** Workflows (workflows.ts): each instance on one shard with its runs' queue jobs. */
  readonly workflows: RedisWorkflows;
  /** Schedules (schedules.ts): each beside what its fires start. */
  readonly schedules: RedisSchedules;

  /**
   * @param keysOn the key names on each shard
   * @param legacyShards the shard count of queues created before placements were stored
   * @param connections what close() closes (default: the shards; a cluster's shards share one)
   */
  constructor(
    shards: Redis[],
    keysOn: (shard: Redis) => Keys,
    legacyShards: number = shards.length,
    private readonly connections: Array<Pick<Redis, "quit" | "disconnect">> = shards,
  ) {
    super(functions);
    this.keys = keysOn(shards[0]!);
    this.ctx = {
      shards,
      keys: this.keys,
      keysOn,
      router: new ShardRouter(shards, (names) => queues.loadPlacement(this.ctx, names), legacyShards),
      scan: (queue, partition, name, args) =>
        runOnPartition(this.ctx, queue, partition, name, (on) => [on.all(queue, partition)], args),
      sweepStart: 0,
    };
    this.workflows = new RedisWorkflows(this.ctx);
    this.schedules = new RedisSchedules(this.ctx, this.workflows);
  }

  async close(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
