/**
 * Queues on MySQL: their rows and placements on shard 0 (tables queues, queue_placement),
 * created, read, grown and deleted with every job, key and lease they have on any shard.
 * loadPlacement is the shard router's loader (../placement.ts): what it caches comes from here.
 */
import { queueNotFound } from "../../domain/errors.js";
import type { QueueConfig } from "../../domain/queue-config.js";
import { decodePlacement, encodePlacement, placePartitions, type StoredQueuePlacement } from "../placement.js";
import type { QueueRecord, QueueStatsRecord } from "../store.js";
import { CHUNK, type MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { run, select } from "./shard.js";
import { duplicateKeyIndex } from "./transient.js";

interface QueueRow {
  name: string;
  config: string;
  created_at: number | string;
}

export async function queueCreate(
  ctx: MysqlContext,
  p: { name: string; config: QueueConfig; now: number },
): Promise<{ queue: QueueRecord; created: boolean }> {
  ctx.router.placement.forget(p.name);
  try {
    // The row and its placement in one transaction: a queue never exists without its map.
    // Placed over the current shard count, so a queue created after shards were added uses them.
    const placement = encodePlacement(placePartitions(p.name, 0, p.config.partitions, ctx.shards.length));
    await ctx.shards[0]!.transaction(async (c) => {
      await run(c, sql.QUEUE_INSERT, [p.name, JSON.stringify(p.config), p.now]);
      await run(c, sql.PLACEMENT_UPSERT, [p.name, placement]);
    });
    return { queue: { name: p.name, config: p.config, createdAt: p.now }, created: true };
  } catch (err) {
    if (duplicateKeyIndex(err) === undefined) throw err;
    const [row] = await ctx.shards[0]!.session((c) => select<QueueRow>(c, sql.QUEUE_SELECT, [p.name]));
    if (!row) throw err;
    return { queue: toQueue(row), created: false };
  }
}

export async function queueDelete(ctx: MysqlContext, p: { name: string }): Promise<boolean> {
  // The row goes first: enqueues hold a shared lock on it, so once this commits no
  // enqueue into the queue is in flight, and the job deletion below sees all of them.
  // The placement goes with it; the jobs are found on every shard, so none is needed below.
  const deleted = await ctx.shards[0]!.transaction(async (c) => {
    const n = await run(c, sql.QUEUE_DELETE, [p.name]);
    await run(c, sql.PLACEMENT_DELETE, [p.name]);
    return n > 0;
  });
  ctx.router.placement.forget(p.name);
  ctx.held.dropQueue(p.name);
  for (const shard of ctx.shards) {
    // Always, even when the row was gone: finishes a delete that crashed half-way.
    while ((await shard.session((c) => run(c, sql.DELETE_QUEUE_JOBS, [p.name, CHUNK]))) >= CHUNK);
    // Then the ordering-key sequences (nothing to promote: every job is gone).
    while ((await shard.session((c) => run(c, sql.DELETE_QUEUE_MEMBERS, [p.name, CHUNK]))) >= CHUNK);
    while ((await shard.session((c) => run(c, sql.DELETE_QUEUE_KEYS, [p.name, CHUNK]))) >= CHUNK);
    await shard.session((c) => run(c, sql.LEASE_RELEASE_QUEUE, [p.name]));
  }
  return deleted;
}

export async function queueGet(ctx: MysqlContext, p: { name: string }): Promise<QueueRecord | undefined> {
  const [row] = await ctx.shards[0]!.session((c) => select<QueueRow>(c, sql.QUEUE_SELECT, [p.name]));
  return row ? toQueue(row) : undefined;
}

export async function queueList(ctx: MysqlContext): Promise<QueueRecord[]> {
  return (await ctx.shards[0]!.session((c) => select<QueueRow>(c, sql.QUEUE_SELECT_ALL))).map(toQueue);
}

export async function queueStats(ctx: MysqlContext, p: { name: string; now: number }): Promise<QueueStatsRecord> {
  if (!(await queueGet(ctx, { name: p.name }))) throw queueNotFound(p.name);
  type StatsRow = Record<"pending" | "scheduled" | "running" | "succeeded" | "failed", number | string> & {
    oldest_due: number | string | null;
  };
  const rows = await Promise.all(
    ctx.shards.map((s) =>
      s.session(async (c) => (await select<StatsRow>(c, sql.QUEUE_STATS, [p.now, p.now, p.name, p.name]))[0]!),
    ),
  );
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

export async function queueUpdate(
  ctx: MysqlContext,
  p: { name: string; config: QueueConfig },
): Promise<QueueRecord | undefined> {
  const updated = await ctx.shards[0]!.transaction(async (c) => {
    const [current] = await select<{ config: string; shards: string | null }>(c, sql.QUEUE_PLACEMENT_LOCK, [p.name]);
    if (!current) return undefined;
    const stored: StoredQueuePlacement = {
      partitions: (JSON.parse(current.config) as QueueConfig).partitions,
      map: current.shards === null ? undefined : decodePlacement(current.shards),
    };
    const map = ctx.router.placement.resolveStored(p.name, stored);
    if (p.config.partitions > map.length) {
      // Added partitions are placed over the current shard count (so they can use added
      // shards); the existing ones stay where they are. Maps never shrink.
      map.push(...placePartitions(p.name, map.length, p.config.partitions, ctx.shards.length));
      await run(c, sql.PLACEMENT_UPSERT, [p.name, encodePlacement(map)]);
    }
    await run(c, sql.QUEUE_UPDATE, [JSON.stringify(p.config), p.name]);
    const [row] = await select<QueueRow>(c, sql.QUEUE_SELECT, [p.name]);
    return row ? toQueue(row) : undefined;
  });
  ctx.router.placement.forget(p.name);
  return updated;
}

/** Placement of queues on shard 0 (one query): their partition counts and stored maps. */
export async function loadPlacement(ctx: MysqlContext, queues: string[]): Promise<Map<string, StoredQueuePlacement>> {
  const rows = await ctx.shards[0]!.session((c) =>
    select<{ name: string; config: string; shards: string | null }>(c, sql.queuePlacements(queues.length), queues),
  );
  return new Map(
    rows.map((r) => [
      r.name,
      {
        partitions: (JSON.parse(r.config) as QueueConfig).partitions,
        map: r.shards === null ? undefined : decodePlacement(r.shards),
      },
    ]),
  );
}

function toQueue(row: QueueRow): QueueRecord {
  return { name: row.name, config: JSON.parse(row.config) as QueueConfig, createdAt: Number(row.created_at) };
}
