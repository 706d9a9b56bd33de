/**
 * Queues on Redis: records, configs and placements on shard 0 ({meta} hashes), the
 * partition markers on each partition's shard, and the per-partition counters that stats
 * and unfiltered counts read. A queue's record never names a partition whose marker is not
 * written yet, so an interrupted create, grow or delete can be repeated. loadPlacement is
 * the shard router's loader (../placement.ts); partitions() lists a queue's partitions for
 * the modules that visit each.
 */
import { queueNotFound } from "../../domain/errors.js";
import type { QueueConfig } from "../../domain/queue-config.js";
import { decodePlacement, encodePlacement, placePartitions, type StoredQueuePlacement } from "../placement.js";
import type { QueueRecord, QueueStatsRecord } from "../store.js";
import { text } from "./codec.js";
import { type RedisContext, runOnPartition } from "./redis-context.js";
import { runScript } from "./scripts.js";
import { CHUNK } from "./walk.js";

export async function queueCreate(
  ctx: RedisContext,
  p: { name: string; config: QueueConfig; now: number },
): Promise<{ queue: QueueRecord; created: boolean }> {
  // Markers first: a queue whose record exists always has its partitions (a retry of
  // a half-done create writes them again; they are idempotent). An existing queue keeps
  // its own partition count and placement; a new one is placed over the current shard count.
  const existing = await queueGet(ctx, { name: p.name });
  ctx.router.placement.forget(p.name);
  const stored =
    existing && (await ctx.router.placement.maps(new Map([[p.name, existing.config.partitions - 1]]))).get(p.name);
  const map = stored ?? placePartitions(p.name, 0, p.config.partitions, ctx.shards.length);
  await writeMarkers(
    ctx,
    p.name,
    map,
    Array.from({ length: (existing ?? p).config.partitions }, (_, i) => i),
  );
  const [created, config, createdAt] = (await runScript(
    ctx.shards[0]!,
    "queue_create",
    [ctx.keys.queues(), ctx.keys.queueCreated(), ctx.keys.placement()],
    [ctx.keys.prefix, p.name, JSON.stringify(p.config), p.now, encodePlacement(map)],
  )) as [number, Buffer, Buffer, unknown];
  // If another server created it first (perhaps over another shard count), its placement
  // won, and its markers were written before its record: read it on next use.
  ctx.router.placement.forget(p.name);
  return {
    queue: { name: p.name, config: JSON.parse(text(config)) as QueueConfig, createdAt: Number(text(createdAt)) },
    created: created === 1,
  };
}

export async function queueDelete(ctx: RedisContext, p: { name: string }): Promise<boolean> {
  const record = await queueGet(ctx, p);
  if (!record) return false;
  // The map as stored now, not as cached: the queue may have been re-created elsewhere.
  ctx.router.placement.forget(p.name);
  // Partitions first, the record and its placement last: an interrupted delete can be repeated.
  await Promise.all(
    Array.from({ length: record.config.partitions }, async (_, partition) => {
      const args = [p.name, partition, CHUNK];
      while (
        ((await runOnPartition(
          ctx,
          p.name,
          partition,
          "queue_purge",
          (on) => [on.all(p.name, partition)],
          args,
        )) as number) > 0
      );
    }),
  );
  await ctx.shards[0]!.multi()
    .hdel(ctx.keys.queues(), p.name)
    .hdel(ctx.keys.queueCreated(), p.name)
    .hdel(ctx.keys.placement(), p.name)
    .exec();
  ctx.router.placement.forget(p.name);
  return true;
}

export async function queueGet(ctx: RedisContext, p: { name: string }): Promise<QueueRecord | undefined> {
  const [config, createdAt] = await Promise.all([
    ctx.shards[0]!.hget(ctx.keys.queues(), p.name),
    ctx.shards[0]!.hget(ctx.keys.queueCreated(), p.name),
  ]);
  if (config === null) return undefined;
  return { name: p.name, config: JSON.parse(config) as QueueConfig, createdAt: Number(createdAt ?? 0) };
}

export async function queueList(ctx: RedisContext): Promise<QueueRecord[]> {
  const [configs, created] = await Promise.all([
    ctx.shards[0]!.hgetall(ctx.keys.queues()),
    ctx.shards[0]!.hgetall(ctx.keys.queueCreated()),
  ]);
  return Object.keys(configs)
    .sort()
    .map((name) => ({
      name,
      config: JSON.parse(configs[name]!) as QueueConfig,
      createdAt: Number(created[name] ?? 0),
    }));
}

export async function queueStats(ctx: RedisContext, p: { name: string; now: number }): Promise<QueueStatsRecord> {
  const stats = await queueCounts(ctx, p.name, p.now);
  if (!stats) throw queueNotFound(p.name);
  return stats;
}

export async function queueUpdate(
  ctx: RedisContext,
  p: { name: string; config: QueueConfig },
): Promise<QueueRecord | undefined> {
  const current = await queueGet(ctx, { name: p.name });
  if (!current) return undefined;
  let placement = "";
  if (p.config.partitions > current.config.partitions) {
    // Added partitions are placed over the current shard count (so they can use added
    // shards); the existing ones stay where they are.
    ctx.router.placement.forget(p.name);
    const map = (await ctx.router.placement.maps(new Map([[p.name, current.config.partitions - 1]])))
      .get(p.name)
      ?.slice(0, current.config.partitions);
    if (!map) return undefined;
    map.push(...placePartitions(p.name, map.length, p.config.partitions, ctx.shards.length));
    placement = encodePlacement(map);
    // Markers of added partitions first, as in queueCreate: the record never names a partition that does not exist.
    const added = Array.from(
      { length: p.config.partitions - current.config.partitions },
      (_, i) => current.config.partitions + i,
    );
    await writeMarkers(ctx, p.name, map, added);
  }
  const createdAt = await runScript(
    ctx.shards[0]!,
    "queue_update",
    [ctx.keys.queues(), ctx.keys.queueCreated(), ctx.keys.placement()],
    [ctx.keys.prefix, p.name, JSON.stringify(p.config), placement],
  );
  ctx.router.placement.forget(p.name);
  if (createdAt === null) return undefined;
  return { name: p.name, config: p.config, createdAt: Number(text(createdAt)) };
}

/** Placement of queues on shard 0 (one atomic read): their partition counts and stored maps. */
export async function loadPlacement(ctx: RedisContext, queues: string[]): Promise<Map<string, StoredQueuePlacement>> {
  const replies = await ctx.shards[0]!.multi()
    .hmget(ctx.keys.queues(), ...queues)
    .hmget(ctx.keys.placement(), ...queues)
    .exec();
  const [configs, maps] = (replies ?? []).map(([err, value]) => {
    if (err) throw err;
    return value as Array<string | null>;
  });
  const found = new Map<string, StoredQueuePlacement>();
  queues.forEach((queue, i) => {
    const config = configs?.[i];
    if (config == null) return;
    const map = maps?.[i];
    found.set(queue, {
      partitions: (JSON.parse(config) as QueueConfig).partitions,
      map: map == null ? undefined : decodePlacement(map),
    });
  });
  return found;
}

async function writeMarkers(ctx: RedisContext, queue: string, map: number[], partitions: number[]): Promise<void> {
  await Promise.all(
    [...ctx.router.byShardIn(map, queue, partitions)].map(([shard, list]) => {
      const multi = shard.multi();
      for (const partition of list) multi.set(ctx.keysOn(shard).marker(queue, partition), "1");
      return multi.exec();
    }),
  );
}

/** The queue's partition numbers (none for an unknown queue). */
export async function partitions(ctx: RedisContext, queue: string): Promise<number[]> {
  const record = await queueGet(ctx, { name: queue });
  return Array.from({ length: record?.config.partitions ?? 0 }, (_, i) => i);
}

/** The queue's stats from its partitions' counters (queue_stats.lua, one call per shard); undefined for an unknown queue. */
export async function queueCounts(
  ctx: RedisContext,
  queue: string,
  now: number,
): Promise<QueueStatsRecord | undefined> {
  const record = await queueGet(ctx, { name: queue });
  if (!record) return undefined;
  const partitions = Array.from({ length: record.config.partitions }, (_, i) => i);
  const replies = await Promise.all(
    [...(await ctx.router.byShard(queue, partitions))].map(
      async ([shard, list]) =>
        (await runScript(
          shard,
          "queue_stats",
          [ctx.keysOn(shard).claimChecks()],
          [ctx.keysOn(shard).prefix, queue, now, ...list],
        )) as [number, number, number, number, number, number, Buffer],
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
