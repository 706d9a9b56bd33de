/**
 * Which broker owns which partition: rendezvous (highest random weight) hashing over the
 * live brokers, with bounded loads. Each broker gets a weight per partition,
 * `sha1(broker id, queue, partition)`; partitions are placed in order, each with the
 * highest-weight broker that still has room, room being ceil(partitions / brokers) per
 * queue. Every node computes the same answer from the same list without coordination.
 *
 * Plain rendezvous hashing moves only the partitions a joining or leaving broker gains or
 * loses, but with a few partitions per broker it is lumpy (6 partitions on 3 brokers
 * often land 3/2/1). The bound makes each queue even (2/2/2) at the cost of a few more
 * moves when the set changes (server/test/cluster/assignment.test.ts measures both).
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

/** The owner (broker id) of each partition 0…count-1 of `queue`; empty when there are no brokers. */
export function assignQueue(brokers: readonly string[], queue: string, count: number): string[] {
  if (brokers.length === 0) return [];
  const room = Math.ceil(count / brokers.length);
  const load = new Map<string, number>();
  const owners: string[] = [];
  for (let partition = 0; partition < count; partition++) {
    // Highest weight first; ties (astronomically rare) go to the smaller id, so every node agrees.
    const ranked = brokers
      .map((id) => ({ id, w: weight(id, queue, partition) }))
      .sort((a, b) => b.w - a.w || (a.id < b.id ? -1 : 1));
    const owner = ranked.find((r) => (load.get(r.id) ?? 0) < room)!.id;
    load.set(owner, (load.get(owner) ?? 0) + 1);
    owners.push(owner);
  }
  return owners;
}
