/**
 * Where a queue's partition lives when there are several shards (--store given N times):
 *
 *   shard(queue, partition) = (crc32(queue) + partition) mod N
 *
 * so one queue's partitions go round-robin over the shards, starting at a shard chosen by
 * the queue's name (single-partition queues spread over the shards too). Queue metadata
 * lives on shard 0. The map depends on the order and number of --store URLs: keep them
 * fixed for a deployment (docs/mysql.md).
 */
import { crc32 } from "node:zlib";

export function shardIndex(queue: string, partition: number, shards: number): number {
  return (crc32(queue) + partition) % shards;
}
