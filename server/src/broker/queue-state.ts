import type { QueueConfig } from "../domain/queue-config.js";
import type { PartitionBuffer } from "./partition-buffer.js";
import type { RateLimiter } from "./rate-limiter.js";
import type { Waiters } from "./waiters.js";

/** What a broker keeps about one queue it serves: its config, one buffer per partition, its waiters and rate. */
export interface QueueState {
  name: string;
  config: QueueConfig;
  partitions: PartitionBuffer[];
  limiter: RateLimiter;
  waiters: Waiters;
  /** Counts due announcements (markDue), so a Dequeue can tell one arrived while it looked. */
  announced: number;
  /** Dropped (queue deleted): claims still in flight put their jobs straight back. */
  retired: boolean;
}
