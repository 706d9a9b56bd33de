import { describe, expect, it } from "vitest";
import { assignQueue, ownerOf } from "../../src/cluster/assignment.js";

const partitionsOf = (brokers: string[], queues: number, partitions: number) => {
  const owners = new Map<string, string | undefined>();
  for (let q = 0; q < queues; q++) for (let p = 0; p < partitions; p++) owners.set(`q${q}/${p}`, ownerOf(brokers, `q${q}`, p));
  return owners;
};

describe("rendezvous assignment", () => {
  it("has no owner without brokers", () => {
    expect(ownerOf([], "q", 0)).toBeUndefined();
  });

  it("is the same on every node whatever the order of the broker list", () => {
    for (let p = 0; p < 50; p++) expect(ownerOf(["a", "b", "c"], "emails", p)).toBe(ownerOf(["c", "a", "b"], "emails", p));
  });

  it("spreads partitions evenly over brokers", () => {
    const owners = partitionsOf(["a", "b", "c"], 30, 20); // 600 partitions
    const counts = new Map<string, number>();
    for (const o of owners.values()) counts.set(o!, (counts.get(o!) ?? 0) + 1);
    for (const id of ["a", "b", "c"]) {
      expect(counts.get(id)).toBeGreaterThan(160);
      expect(counts.get(id)).toBeLessThan(240);
    }
  });

  it("moves only the partitions the joining broker takes, and only the leaving broker's", () => {
    const before = partitionsOf(["a", "b", "c"], 10, 30);
    const joined = partitionsOf(["a", "b", "c", "d"], 10, 30);
    let moved = 0;
    for (const [key, owner] of joined) {
      if (owner !== before.get(key)) {
        expect(owner).toBe("d");
        moved++;
      }
    }
    expect(moved).toBeGreaterThan(40); // about a quarter of 300
    expect(moved).toBeLessThan(110);
    const left = partitionsOf(["a", "c"], 10, 30);
    for (const [key, owner] of left) if (before.get(key) !== "b") expect(owner).toBe(before.get(key));
  });

  it("groups a queue's partitions by owner", () => {
    const groups = assignQueue(["a", "b"], "q", 8);
    expect([...groups.values()].flat().sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    for (const [owner, partitions] of groups) for (const p of partitions) expect(ownerOf(["a", "b"], "q", p)).toBe(owner);
  });
});
