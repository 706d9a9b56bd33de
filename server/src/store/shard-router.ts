/**
 * Routing over a sharded store (--store given N times): which shard holds a partition,
 * and a batch split by the shard each item lives on. Stores give it their shard handles
 * and a loader for the stored placements (placement.ts); every lookup after the first is
 * a cache hit, so routing costs no round trip on the hot path.
 */
import { parseJobId } from "../domain/job-id.js";
import { highestPartitions, PlacementCache, type PlacementLoader } from "./placement.js";

/** A queue partition, as a job id names it. */
export interface PartitionRef {
  queue: string;
  partition: number;
}

/** An item of a batch and its position in the batch (answers go back in the caller's order). */
export interface Located<T> {
  item: T;
  index: number;
}

export class ShardRouter<S> {
  /** Each queue's shard per partition; stores drop entries when they change a queue (forget). */
  readonly placement: PlacementCache;

  /** @param legacyShards the shard count of queues created before placements were stored */
  constructor(
    readonly shards: S[],
    load: PlacementLoader,
    legacyShards: number = shards.length,
  ) {
    this.placement = new PlacementCache(load, legacyShards, shards.length);
  }

  /** The shard holding one partition. */
  async shardOf(queue: string, partition: number): Promise<S> {
    return this.at(await this.placement.shardOf(queue, partition));
  }

  /** A queue's partitions grouped by the shard that holds them. */
  async byShard(queue: string, partitions: number[]): Promise<Map<S, number[]>> {
    if (partitions.length === 0) return new Map();
    const map = (await this.placement.maps(new Map([[queue, Math.max(...partitions)]]))).get(queue);
    return this.byShardIn(map, queue, partitions);
  }

  /** A queue's partitions grouped by shard under a given placement map. */
  byShardIn(map: number[] | undefined, queue: string, partitions: number[]): Map<S, number[]> {
    const groups = new Map<S, number[]>();
    for (const partition of partitions) {
      const shard = this.at(this.placement.shardIn(map, queue, partition));
      groups.set(shard, [...(groups.get(shard) ?? []), partition]);
    }
    return groups;
  }

  /**
   * Items grouped by the shard of the partition `where` names (by default the one their job
   * id names). Items that name no partition are left out, with several shards; with one,
   * every item goes to it unread (the store finds nothing under an id that names nothing).
   */
  async groupByShard<T>(items: T[], where: (item: T) => PartitionRef | undefined): Promise<Map<S, Array<Located<T>>>> {
    if (items.length === 0) return new Map();
    if (this.shards.length === 1) return new Map([[this.at(0), items.map((item, index) => ({ item, index }))]]);
    const located = items.map(where);
    const maps = await this.placement.maps(highestPartitions(located.filter((w) => w !== undefined)));
    const groups = new Map<S, Array<Located<T>>>();
    items.forEach((item, index) => {
      const ref = located[index];
      if (!ref) return;
      const shard = this.at(this.placement.shardIn(maps.get(ref.queue), ref.queue, ref.partition));
      let list = groups.get(shard);
      if (!list) groups.set(shard, (list = []));
      list.push({ item, index });
    });
    return groups;
  }

  private at(index: number): S {
    const shard = this.shards[index];
    if (shard === undefined) throw new Error(`no shard ${index} of ${this.shards.length}`);
    return shard;
  }
}

/** The partition a job id names, for groupByShard. */
export function partitionOfId(id: string): PartitionRef | undefined {
  return parseJobId(id);
}
