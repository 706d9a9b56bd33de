/**
 * Ordering keys: jobs of a queue sharing a key run one at a time, in enqueue order
 * (docs/state-machine.md, "Ordering keys and FIFO queues"). Stores keep one sequence per
 * (partition, key); the engine routes a key to one partition so that is one per queue.
 */
import { invalidArgument } from "./errors.js";
import { limits } from "./limits.js";
import type { QueueConfig } from "./queue-config.js";

/**
 * The key every job of a FIFO queue gets: the whole queue is one sequence. Users cannot
 * give it (keys may not contain NUL), and the API shows it as "" (no key of theirs).
 */
export const FIFO_ORDERING_KEY = "\u0000";

/** The key a job is stored with: the user's (validated) on ordinary queues, FIFO_ORDERING_KEY on FIFO ones. */
export function storedOrderingKey(userKey: string, config: QueueConfig, field: string): string {
  if (config.fifo) return FIFO_ORDERING_KEY; // the queue is one sequence: the user's key adds nothing
  if (userKey.includes("\u0000")) throw invalidArgument(field, "ordering_key must not contain NUL characters (U+0000)");
  // Counted in code points (as the MySQL column holds them); UTF-16 units are never fewer.
  if (userKey.length > limits.orderingKeyMaxLength && [...userKey].length > limits.orderingKeyMaxLength) {
    throw invalidArgument(field, `ordering_key is longer than ${limits.orderingKeyMaxLength} characters`);
  }
  return userKey;
}

/** The key as users see it (Job.ordering_key): FIFO queues' internal key is not theirs. */
export function visibleOrderingKey(stored: string): string {
  return stored === FIFO_ORDERING_KEY ? "" : stored;
}
