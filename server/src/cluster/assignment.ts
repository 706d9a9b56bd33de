/**
 * Which broker owns which partition: rendezvous (highest random weight) hashing over the
 * live brokers. Every node computes the same answer from the same broker list, with no
 * coordination; when a broker joins or leaves, only the partitions it gains or loses
 * move (about 1/N of them), and the load is balanced without a stored table.
 *
 * The assignment only says who *should* own a partition. Who *does* is decided by the
 * epoch-fenced lease in the store: while views of the broker list differ (for up to one
 * refresh interval), two brokers may both want a partition, and the lease lets one in.
 */
import { createHash } from "node:crypto";

/** The weight of `broker` for one partition: a stable 48-bit hash. */
function weight(broker: string, queue: string, partition: number): number {
  return createHash("sha1").update(`${broker}\u0000${queue}\u0000${partition}`).digest().readUIntBE(0, 6);
}

/** The owner among `brokers` (ids) of `queue`/`partition`, or undefined if there are none. */
export function ownerOf(brokers: readonly string[], queue: string, partition: number): string | undefined {
  let best: string | undefined;
  let bestWeight = -1;
  for (const broker of brokers) {
    const w = weight(broker, queue, partition);
    // Ties (astronomically rare) go to the smaller id, so every node agrees.
    if (w > bestWeight || (w === bestWeight && best !== undefined && broker < best)) {
      best = broker;
      bestWeight = w;
    }
  }
  return best;
}

/** Partitions 0…count-1 of `queue` grouped by owner id, in partition order. */
export function assignQueue(brokers: readonly string[], queue: string, count: number): Map<string, number[]> {
  const byOwner = new Map<string, number[]>();
  for (let partition = 0; partition < count; partition++) {
    const owner = ownerOf(brokers, queue, partition);
    if (owner === undefined) continue;
    const list = byOwner.get(owner) ?? [];
    list.push(partition);
    byOwner.set(owner, list);
  }
  return byOwner;
}
