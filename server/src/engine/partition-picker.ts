import { createHash } from "node:crypto";
import type { QueueConfig } from "../domain/queue-config.js";

/**
 * Which partition a new job goes to. Jobs sharing an ordering key share a partition,
 * where the store keeps their sequence; so do jobs sharing an idempotency key, so the
 * store can dedupe them. `key` is the ordering key when there is one, else the
 * idempotency key: with both, idempotency dedupes among the jobs that land on the
 * ordering key's partition. Jobs without a key go round-robin.
 */
export class PartitionPicker {
  private readonly roundRobin = new Map<string, number>();

  pick(queue: string, key: string, config: QueueConfig): number {
    if (config.partitions === 1) return 0;
    // Over the partitions the queue was created with: growing a queue never splits a key's jobs.
    if (key !== "")
      return createHash("sha1").update(key).digest().readUInt32BE(0) % (config.keyPartitions ?? config.partitions);
    return this.next(queue, config.partitions);
  }

  /**
   * Round-robin among some partitions of a queue: those a workflow instance's runs may use
   * on a store of several shards (the partitions on the instance's shard).
   */
  pickAmong(queue: string, partitions: number[]): number {
    return partitions[this.next(queue, partitions.length)]!;
  }

  /**
   * A partition fixed by `key` among some partitions of a queue (a schedule's plain job, on
   * its schedule's shard): as `pick` does for a key, over those the queue was created with
   * when any of them is, so the queue's growth does not move it.
   */
  pickAmongByKey(key: string, partitions: number[], config: QueueConfig): number {
    const original = partitions.filter((p) => p < (config.keyPartitions ?? config.partitions));
    const among = original.length > 0 ? original : partitions;
    return among[createHash("sha1").update(key).digest().readUInt32BE(0) % among.length]!;
  }

  private next(queue: string, count: number): number {
    const next = ((this.roundRobin.get(queue) ?? -1) + 1) % count;
    this.roundRobin.set(queue, next);
    return next;
  }
}
