/**
 * Adding a shard, for any sharded store: data placed over 2 shards stays where it is and
 * reachable when the store is reopened with a third URL appended; new queues and grown
 * partitions use the new shard; a reordered, shortened or polluted list is refused; a
 * queue from before placements were stored (no map) keeps its formula placement.
 * The store-specific files supply how to open and how to look inside a shard.
 */
import { expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { formulaShard, placePartitions } from "../../src/store/placement.js";
import type { Store } from "../../src/store/store.js";
import { createQueue, handOut, insert, T0 } from "../storetest/fixtures.js";

export interface GrowthHarness {
  /** Opens the store over the harness's shards at these positions of its URL list (0..3). */
  open(shards: number[]): Promise<Store>;
  /** The stored placement of `queue` ("0,1,…"), undefined when it has none. */
  placement(queue: string): Promise<string | undefined>;
  /** Removes the stored placement of `queue`: it then looks like a queue created before maps. */
  dropPlacement(queue: string): Promise<void>;
  /** Whether shard `shard` (a list position) holds jobs of the partition. */
  holdsJobs(shard: number, queue: string, partition: number): Promise<boolean>;
  /** Writes runlater data (no shard index) into the shard at list position `shard`. */
  pollute(shard: number): Promise<void>;
}

/** Hands out and acknowledges every job of each partition; returns how many. */
async function drain(store: Store, queue: string, partitions: number): Promise<number> {
  let n = 0;
  for (let partition = 0; partition < partitions; partition++) {
    const jobs = await handOut(store, queue, { partition });
    const results = await store.jobCompleteMany({
      items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "" })),
      now: T0,
    });
    expect(results.every((r) => r.outcome === "acknowledged")).toBe(true);
    n += jobs.length;
  }
  return n;
}

const perPartition = (partitions: number) =>
  Array.from({ length: partitions * 2 }, (_, i) => ({ partition: i % partitions }));

/** `make` gives each test a deployment of its own (fresh shards). */
export function shardGrowthTests(make: () => GrowthHarness): void {
  it("adding a shard moves nothing; new queues and grown partitions use it", async () => {
    const h = make();
    const two = await h.open([0, 1]);
    const a = await createQueue(two, { partitions: 4 });
    const placedA = await h.placement(a);
    expect(placedA).toBe(placePartitions(a, 0, 4, 2).join(","));
    const idsA = await insert(two, a, perPartition(4));
    await two.close();

    const three = await h.open([0, 1, 2]);
    try {
      expect(await h.placement(a)).toBe(placedA);
      expect((await three.jobGetMany({ ids: idsA })).every((j) => j?.state === "pending")).toBe(true);
      expect(await drain(three, a, 4)).toBe(idsA.length);

      // A new queue spreads over all three shards (3 consecutive partitions).
      const b = await createQueue(three, { partitions: 3 });
      expect(await h.placement(b)).toBe(placePartitions(b, 0, 3, 3).join(","));
      const onThird = [0, 1, 2].find((p) => formulaShard(b, p, 3) === 2)!;
      await insert(three, b, perPartition(3));
      expect(await h.holdsJobs(2, b, onThird)).toBe(true);
      expect(await drain(three, b, 3)).toBe(6);

      // A's new partitions are placed over 3 shards; the old ones stay.
      const grown = resolveQueueConfig({ partitions: 8 });
      await three.queueUpdate({ name: a, config: grown });
      const mapA = (await h.placement(a))!.split(",").map(Number);
      expect(mapA.slice(0, 4).join(",")).toBe(placedA);
      expect(mapA.slice(4)).toEqual(placePartitions(a, 4, 8, 3));
      const grownOnThird = [4, 5, 6, 7].find((p) => mapA[p] === 2)!;
      expect(grownOnThird).toBeDefined();
      await insert(three, a, perPartition(8));
      expect(await h.holdsJobs(2, a, grownOnThird)).toBe(true);
      expect(await drain(three, a, 8)).toBe(16);
      expect((await three.queueStats({ name: a, now: T0 })).succeeded).toBe(idsA.length + 16);
    } finally {
      await three.close();
    }
  });

  it("refuses a reordered or shortened list and a non-empty unknown shard", async () => {
    const h = make();
    const three = await h.open([0, 1, 2]);
    await createQueue(three, { partitions: 3 });
    await three.close();
    await expect(h.open([1, 0, 2])).rejects.toThrow(/original order/);
    await expect(h.open([0, 1])).rejects.toThrow(/cannot be removed/);
    await h.pollute(3);
    await expect(h.open([0, 1, 2, 3])).rejects.toThrow(/not a new shard/);
    // The refusals changed nothing: the original list still opens.
    const again = await h.open([0, 1, 2]);
    await again.close();
  });

  it("a queue created before placements were stored keeps its formula placement, also after a shard is added", async () => {
    const h = make();
    const two = await h.open([0, 1]);
    const legacy = await createQueue(two, { partitions: 4 });
    const ids = await insert(two, legacy, perPartition(4));
    await two.close();
    await h.dropPlacement(legacy);
    expect(await h.placement(legacy)).toBeUndefined();

    const three = await h.open([0, 1, 2]);
    try {
      // Found where the formula over the deployment's original 2 shards put them.
      expect((await three.jobGetMany({ ids })).map((j) => j?.id)).toEqual(ids);
      for (let p = 0; p < 4; p++) expect(await h.holdsJobs(formulaShard(legacy, p, 2), legacy, p)).toBe(true);
      expect(await drain(three, legacy, 4)).toBe(8);
      // Growing it stores a map: the old partitions as the formula placed them, the new over 3.
      await three.queueUpdate({ name: legacy, config: resolveQueueConfig({ partitions: 6 }) });
      expect(await h.placement(legacy)).toBe(
        [...placePartitions(legacy, 0, 4, 2), ...placePartitions(legacy, 4, 6, 3)].join(","),
      );
      await insert(three, legacy, perPartition(6));
      expect(await drain(three, legacy, 6)).toBe(12);
      expect(await three.queueDelete({ name: legacy })).toBe(true);
      expect(await h.placement(legacy)).toBeUndefined();
    } finally {
      await three.close();
    }
  });
}
