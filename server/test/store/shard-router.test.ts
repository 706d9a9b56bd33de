import { describe, expect, it } from "vitest";
import { newJobId } from "../../src/domain/job-id.js";
import type { StoredQueuePlacement } from "../../src/store/placement.js";
import { partitionOfId, ShardRouter } from "../../src/store/shard-router.js";

/** A router over named fake shards, with placements stored on a fake shard 0. */
function router(shards: string[], stored: Record<string, StoredQueuePlacement>) {
  let reads = 0;
  const r = new ShardRouter(shards, async (queues) => {
    reads++;
    return new Map(queues.filter((q) => q in stored).map((q) => [q, stored[q]!]));
  });
  return { r, reads: () => reads };
}

describe("shard router", () => {
  it("groups a batch by the shard each job id's partition is placed on, keeping each item's position", async () => {
    const { r, reads } = router(["s0", "s1", "s2"], { a: { partitions: 3, map: [2, 0, 2] } });
    const ids = [newJobId("a", 0, 1), newJobId("a", 1, 1), newJobId("a", 2, 1)];
    const groups = await r.groupByShard(ids, partitionOfId);
    expect([...groups.keys()].sort()).toEqual(["s0", "s2"]);
    expect(groups.get("s2")!.map((l) => l.index)).toEqual([0, 2]);
    expect(groups.get("s0")!.map((l) => l.item)).toEqual([ids[1]]);
    expect(reads()).toBe(1);
    await r.groupByShard(ids, partitionOfId);
    expect(reads()).toBe(1); // the second batch is routed from the cache
  });

  it("leaves out ids that name no partition when there are several shards", async () => {
    const { r } = router(["s0", "s1"], { a: { partitions: 1, map: [1] } });
    const groups = await r.groupByShard(["not-an-id", newJobId("a", 0, 1)], partitionOfId);
    expect([...groups.values()].flat().map((l) => l.index)).toEqual([1]);
  });

  it("sends everything to the only shard without reading placements", async () => {
    const { r, reads } = router(["only"], {});
    const groups = await r.groupByShard(["not-an-id", "x"], partitionOfId);
    expect(groups.get("only")!.map((l) => l.index)).toEqual([0, 1]);
    expect(reads()).toBe(0);
  });

  it("groups a queue's partitions by shard, and refuses a placement beyond the shards it was given", async () => {
    const { r } = router(["s0", "s1"], { a: { partitions: 4, map: [0, 1, 1, 0] }, b: { partitions: 1, map: [5] } });
    expect(await r.byShard("a", [0, 1, 2, 3])).toEqual(
      new Map([
        ["s0", [0, 3]],
        ["s1", [1, 2]],
      ]),
    );
    expect(await r.shardOf("a", 2)).toBe("s1");
    await expect(r.shardOf("b", 0)).rejects.toThrow(/on shard 5.*give it every shard/);
  });
});
