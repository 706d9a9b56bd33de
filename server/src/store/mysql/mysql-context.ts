/**
 * What the MySQL store's modules share: the shards, the routing over them and the jobs this
 * process holds. mysql-store.ts makes one per store; each Store method hands it to the
 * module function of its concern (../delegating-store.ts), so the modules work on one set
 * of state without a class each.
 */
import type { ShardRouter } from "../shard-router.js";
import type { HeldJobs } from "./held-jobs.js";
import type { Shard } from "./shard.js";

export interface MysqlContext {
  readonly shards: Shard[];
  /** Which shard holds each partition (../shard-router.ts): a cache hit on the hot path. */
  readonly router: ShardRouter<Shard>;
  /** What this process's brokers claimed and have not started: the buffered state (held-jobs.ts). */
  readonly held: HeldJobs;
}

/** Rows changed per statement in bulk work (GC, delete, retry), so no statement holds locks for long. */
export const CHUNK = 1000;
