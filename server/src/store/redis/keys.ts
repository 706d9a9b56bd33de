/**
 * Where things live in Redis: the key layout (mirrored by lua/include/keys.lua, which
 * documents every key) and the shard map.
 *
 * Shard map: partition p of queue q lives on shard (crc32(q) + p) mod S, S = the number
 * of --store URLs, in the order given. Consecutive partitions of a queue land on
 * consecutive shards from a queue-dependent start, so a queue's partitions spread evenly
 * and small queues spread over the shards too. The map is a pure function of the shard
 * count, so the store records the count (and each shard its index) and refuses to open
 * with a different list: moving data between shards is not supported.
 * Queue metadata (configs and the list of queues) lives on shard 0.
 */
import { crc32 } from "node:zlib";

export function shardOf(queue: string, partition: number, shards: number): number {
  return (crc32(queue) + partition) % shards;
}

export class Keys {
  constructor(readonly prefix: string) {}

  /** The hash tag of a partition: every key of the partition shares its slot. */
  tag(queue: string, partition: number): string {
    return `${this.prefix}:{q:${queue}:${partition}}`;
  }

  all(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:all`;
  }

  buffered(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:buf`;
  }

  counters(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:n`;
  }

  /** Shard 0: hash broker id → JSON {url, expiresAt} (the broker registry). */
  brokers(): string {
    return `${this.prefix}:{meta}:brokers`;
  }

  /** Per shard: the lease epoch counter (epochs only grow, even across queue re-creation). */
  epochs(): string {
    return `${this.prefix}:{shard}:epoch`;
  }

  failed(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:done:f`;
  }

  lease(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:lease`;
  }

  marker(queue: string, partition: number): string {
    return `${this.tag(queue, partition)}:q`;
  }

  /** Shard 0: hash queue name → created_at. */
  queueCreated(): string {
    return `${this.prefix}:{meta}:created`;
  }

  /** Shard 0: hash queue name → config JSON. */
  queues(): string {
    return `${this.prefix}:{meta}:queues`;
  }

  /** Per shard: running jobs of every queue by claim expiry, for the global claim sweep. */
  running(): string {
    return `${this.prefix}:{shard}:running`;
  }

  /** Shard 0: the number of shards the map was built for. */
  shardCount(): string {
    return `${this.prefix}:{meta}:shards`;
  }

  /** Per shard: its index in the --store list. */
  shardIndex(): string {
    return `${this.prefix}:{meta}:shard`;
  }
}
