/**
 * Where a queue's partitions live when a store has several shards (--store given N times):
 * the queue → partition → shard map is stored data, one shard index per partition, kept
 * with the queue's record on shard 0 (Redis: hash <prefix>:{meta}:placement; MySQL: table
 * queue_placement). Stored, not computed, so shards can be added without moving data: a
 * partition stays where it was placed, whatever the shard count is later.
 *
 * - queueCreate places partition p on (crc32(queue) + p) mod S, S = the shard count at
 *   that moment. That is the formula every queue used before maps were stored, so a
 *   deployment that never adds a shard keeps exactly its old placement, and a queue's
 *   partitions go round-robin over the shards from a start chosen by its name.
 * - Growing a queue's partitions appends placements for the new ones with the same formula
 *   over the current count, so partitions added after a shard was added can use it.
 * - A queue created before maps were stored has none: its partitions are on the formula
 *   over the shard count the deployment was created with (recorded on shard 0).
 *
 * Stores keep the maps in a PlacementCache: routing a partition or a job id is a cache hit
 * on the hot path. A map only ever grows while its queue lives, so a partition beyond the
 * cached map is a miss that reads shard 0 again; and each entry is re-read at most every
 * PLACEMENT_TTL_MS, which bounds how long a process can route by the map of a queue that
 * was deleted and re-created (with a different placement) by another process.
 */
import { crc32 } from "node:zlib";

/** How long a cached map is trusted before it is read again (on its next use). */
export const PLACEMENT_TTL_MS = 5_000;

/** The placement formula: partition p of `queue` over `shards` shards. */
export function formulaShard(queue: string, partition: number, shards: number): number {
  return (crc32(queue) + partition) % shards;
}

/** Placements for partitions [from, to) of `queue` over `shards` shards. */
export function placePartitions(queue: string, from: number, to: number, shards: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, i) => formulaShard(queue, from + i, shards));
}

/** Stored form: shard indexes joined by commas ("0,1,2,0"). */
export function encodePlacement(map: number[]): string {
  return map.join(",");
}

export function decodePlacement(stored: string): number[] {
  return stored === "" ? [] : stored.split(",").map(Number);
}

/** What shard 0 holds about a queue: its partition count and its map (absent for a queue created before maps). */
export interface StoredQueuePlacement {
  partitions: number;
  map?: number[];
}

/** Reads the placement of existing queues from shard 0 in one round trip; absent queues are left out. */
export type PlacementLoader = (queues: string[]) => Promise<Map<string, StoredQueuePlacement>>;

export class PlacementCache {
  private readonly entries = new Map<string, { map: number[]; at: number }>();

  /**
   * @param legacyShards the shard count of queues without a stored map
   * @param shards the number of shards this process was opened with
   */
  constructor(
    private readonly load: PlacementLoader,
    private readonly legacyShards: number,
    private readonly shards: number,
    private readonly ttlMs = PLACEMENT_TTL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The full map of a queue as stored (a legacy queue's derived from the formula). */
  resolveStored(queue: string, stored: StoredQueuePlacement): number[] {
    const map = stored.map ? [...stored.map] : placePartitions(queue, 0, stored.partitions, this.legacyShards);
    // A legacy queue grown by a server that predates maps: its new partitions were placed
    // by the formula over the legacy count too.
    if (map.length < stored.partitions)
      map.push(...placePartitions(queue, map.length, stored.partitions, this.legacyShards));
    return map;
  }

  /**
   * Maps of the queues named, each long enough for the highest partition asked for (when
   * the queue has it). Cache hits cost nothing; misses and stale entries are read from
   * shard 0 in one call. Queues that do not exist are absent from the answer.
   */
  async maps(needs: Map<string, number>): Promise<Map<string, number[]>> {
    const now = this.clock();
    const found = new Map<string, number[]>();
    const missing: string[] = [];
    for (const [queue, highest] of needs) {
      const entry = this.entries.get(queue);
      if (entry && now - entry.at < this.ttlMs && highest < entry.map.length) found.set(queue, entry.map);
      else missing.push(queue);
    }
    if (missing.length === 0) return found;
    const loaded = await this.load(missing);
    for (const queue of missing) {
      const stored = loaded.get(queue);
      if (!stored) {
        this.entries.delete(queue);
        continue;
      }
      const map = this.resolveStored(queue, stored);
      this.entries.set(queue, { map, at: now });
      found.set(queue, map);
    }
    return found;
  }

  /** The shard of one partition (see shardIn). */
  async shardOf(queue: string, partition: number): Promise<number> {
    return this.shardIn((await this.maps(new Map([[queue, partition]]))).get(queue), queue, partition);
  }

  /**
   * The shard of `partition` under `map`. A queue or partition that does not exist has no
   * placement: it goes to the formula's shard over the current count, where the store finds
   * no such partition and answers as for any unknown partition (not found, no lease).
   */
  shardIn(map: number[] | undefined, queue: string, partition: number): number {
    const shard = map?.[partition] ?? formulaShard(queue, partition, this.shards);
    if (shard >= this.shards) {
      throw new Error(
        `partition ${partition} of queue "${queue}" is on shard ${shard}, but this server was given ${this.shards} --store URLs: give it every shard`,
      );
    }
    return shard;
  }

  /** Drops a queue's entry (after this process created, grew or deleted it). */
  forget(queue: string): void {
    this.entries.delete(queue);
  }
}

/** The highest partition each queue is asked about, for PlacementCache.maps. */
export function highestPartitions(wants: Iterable<{ queue: string; partition: number }>): Map<string, number> {
  const needs = new Map<string, number>();
  for (const { queue, partition } of wants) needs.set(queue, Math.max(partition, needs.get(queue) ?? -1));
  return needs;
}
