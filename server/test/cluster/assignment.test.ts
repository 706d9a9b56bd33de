import { describe, expect, it } from "vitest";
import { assignQueue } from "../../src/cluster/assignment.js";

/** Owner of every partition of `queues` queues × `partitions` partitions, keyed "q/p". */
const ownersOf = (brokers: string[], queues: number, partitions: number) => {
  const owners = new Map<string, string>();
  for (let q = 0; q < queues; q++)
    for (const [p, o] of assignQueue(brokers, `q${q}`, partitions).entries()) owners.set(`q${q}/${p}`, o);
  return owners;
};

const moved = (a: Map<string, string>, b: Map<string, string>) => [...a].filter(([k, o]) => b.get(k) !== o).length;

describe("partition assignment", () => {
  it("has no owners without brokers", () => {
    expect(assignQueue([], "q", 4)).toEqual([]);
  });

  it("is the same on every node whatever the order of the broker list", () => {
    expect(assignQueue(["a", "b", "c"], "emails", 50)).toEqual(assignQueue(["c", "a", "b"], "emails", 50));
  });

  it("balances every queue: no broker has more than its share, rounded up", () => {
    for (let q = 0; q < 50; q++) {
      for (const [brokers, partitions] of [
        [["a", "b", "c"], 6],
        [["a", "b", "c"], 7],
        [["a", "b"], 5],
        [["a", "b", "c", "d"], 16],
      ] as const) {
        const owners = assignQueue(brokers, `q${q}`, partitions);
        const counts = brokers.map((id) => owners.filter((o) => o === id).length);
        expect(Math.max(...counts)).toBe(Math.ceil(partitions / brokers.length));
        expect(counts.reduce((a, b) => a + b)).toBe(partitions);
      }
    }
  });

  it("moves few partitions when a broker joins or leaves", () => {
    const before = ownersOf(["a", "b", "c"], 40, 12); // 480 partitions
    const joined = ownersOf(["a", "b", "c", "d"], 40, 12);
    // The new broker must take a quarter; bounded loads move a few more than that.
    const toD = [...joined.values()].filter((o) => o === "d").length;
    expect(toD).toBe(120);
    expect(moved(before, joined)).toBeLessThan(120 * 1.6);
    const left = ownersOf(["a", "c"], 40, 12);
    const fromB = [...before.values()].filter((o) => o === "b").length;
    expect(moved(before, left)).toBeLessThan(fromB * 1.6);
  });
});
