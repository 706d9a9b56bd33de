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
  readonly keys: Keys;
  /** Which shard holds each partition (../shard-router.ts): a cache hit on the hot path. */
  readonly router: ShardRouter<Redis>;
  /** job_scan.lua on a partition, for the admin walks (walk.ts). */
  readonly scan: PartitionScript;
  /** The shard the next claim sweep starts at: jobClaimExpire rotates it so none starves. */
  sweepStart: number;
}

/** Runs a partition's script on its shard; ARGV starts with the prefix. */
export async function runOnPartition(
  ctx: RedisContext,
  queue: string,
  partition: number,
  name: ScriptName,
  keys: string[],
  args: ScriptArg[],
): Promise<unknown> {
  return runScript(await ctx.router.shardOf(queue, partition), name, keys, [ctx.keys.prefix, ...args]);
}
