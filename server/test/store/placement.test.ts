import { describe, expect, it } from "vitest";
import { formulaShard, PlacementCache, placePartitions, type StoredQueuePlacement } from "../../src/store/placement.js";

/** A cache over a fake shard 0 that counts its reads, with a hand-driven clock. */
function harness(legacyShards: number, shards: number) {
  const stored = new Map<string, StoredQueuePlacement>();
  let reads = 0;
  let now = 0;
  const cache = new PlacementCache(
    async (queues) => {
      reads++;
      return new Map(queues.filter((q) => stored.has(q)).map((q) => [q, stored.get(q)!]));
    },
    legacyShards,
    shards,
    5_000,
    () => now,
  );
  return { cache, stored, reads: () => reads, advance: (ms: number) => (now += ms) };
}

describe("placement cache", () => {
  it("serves hits without reading, and reads again for a partition beyond the cached map", async () => {
    const h = harness(2, 3);
    h.stored.set("a", { partitions: 2, map: [2, 0] });
    expect(await h.cache.shardOf("a", 1)).toBe(0);
    expect(await h.cache.shardOf("a", 0)).toBe(2);
    expect(h.reads()).toBe(1);
    h.stored.set("a", { partitions: 3, map: [2, 0, 1] }); // grown elsewhere
    expect(await h.cache.shardOf("a", 2)).toBe(1);
    expect(h.reads()).toBe(2);
  });

  it("re-reads a cached map after the TTL, so a queue re-created elsewhere is picked up", async () => {
    const h = harness(2, 3);
    h.stored.set("a", { partitions: 1, map: [1] });
    expect(await h.cache.shardOf("a", 0)).toBe(1);
    h.stored.set("a", { partitions: 1, map: [2] }); // deleted and re-created by another server
    h.advance(4_999);
    expect(await h.cache.shardOf("a", 0)).toBe(1);
    h.advance(1);
    expect(await h.cache.shardOf("a", 0)).toBe(2);
    expect(h.reads()).toBe(2);
  });

  it("places a queue without a stored map by the formula over the legacy count", async () => {
    const h = harness(2, 3);
    h.stored.set("old", { partitions: 4 });
    const maps = await h.cache.maps(new Map([["old", 3]]));
    expect(maps.get("old")).toEqual(placePartitions("old", 0, 4, 2));
    // Unknown queues and partitions go to the formula over the current count (where nothing is found).
    expect(await h.cache.shardOf("nope", 1)).toBe(formulaShard("nope", 1, 3));
  });

  it("refuses a placement on a shard this server was not given", async () => {
    const h = harness(2, 2);
    h.stored.set("a", { partitions: 1, map: [2] });
    await expect(h.cache.shardOf("a", 0)).rejects.toThrow(/give it every shard/);
  });
});
