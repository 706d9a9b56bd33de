/**
 * What the Redis store's modules share: the shards, the key layout, the routing over the
 * shards, and how a partition's script runs on its shard. redis-store.ts makes one per store;
 * each Store method hands it to the module function of its concern (../delegating-store.ts),
 * so the modules work on one set of state without a class each.
 */
import type { Redis } from "ioredis";
import type { ShardRouter } from "../shard-router.js";
import type { Keys } from "./keys.js";
import { runScript, type ScriptArg, type ScriptName } from "./scripts.js";
import type { PartitionScript } from "./walk.js";

export interface RedisContext {
  readonly shards: Redis[];
  /** The key names on shard 0: the queues' metadata, tokens, brokers, workflows. */
  readonly keys: Keys;
  /** The key names on a shard: ctx.keys, except on a Redis Cluster, where each shard's keys carry its hash tag (cluster.ts). */
  keysOn(shard: Redis): Keys;
  /** Which shard holds each partition (../shard-router.ts): a cache hit on the hot path. */
  readonly router: ShardRouter<Redis>;
  /** job_scan.lua on a partition, for the admin walks (walk.ts). */
  readonly scan: PartitionScript;
  /** The shard the next claim sweep starts at: jobClaimExpire rotates it so none starves. */
  sweepStart: number;
}

/** Runs a partition's script on its shard, KEYS named by `keys` on that shard; ARGV starts with the shard's prefix. */
export async function runOnPartition(
  ctx: RedisContext,
  queue: string,
  partition: number,
  name: ScriptName,
  keys: (on: Keys) => string[],
  args: ScriptArg[],
): Promise<unknown> {
  const shard = await ctx.router.shardOf(queue, partition);
  const on = ctx.keysOn(shard);
  return runScript(shard, name, keys(on), [on.prefix, ...args]);
}
