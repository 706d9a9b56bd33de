import { describe, expect, it } from "vitest";
import { settle } from "../../src/domain/clock.js";
import { GroupCommit } from "../../src/domain/group-commit.js";

/** A GroupCommit whose writes are recorded and held until released. */
function held(o: { maxCalls?: number; maxWeight?: number } = {}) {
  const writes: number[][] = [];
  const pending: Array<(answers: Array<number | Error> | Error) => void> = [];
  const group = new GroupCommit<number, number>({
    write: (inputs) => {
      writes.push(inputs);
      return new Promise((resolve, reject) =>
        pending.push((answers) => (answers instanceof Error ? reject(answers) : resolve(answers))),
      );
    },
    maxCalls: o.maxCalls ?? 100,
    maxWeight: o.maxWeight,
    weigh: (n) => n,
  });
  return {
    group,
    writes,
    /** Answers the oldest write in flight: each input doubled, or `as` for all of them. */
    answer: async (as?: (inputs: number[]) => Array<number | Error> | Error) => {
      const inputs = writes[writes.length - pending.length]!;
      pending.shift()!(as ? as(inputs) : inputs.map((n) => n * 2));
      await settle();
    },
  };
}

describe("GroupCommit", () => {
  it("writes a lone call at once, and the calls that arrive during a write together after it", async () => {
    const t = held();
    const first = t.group.submit("", 1);
    await settle();
    expect(t.writes).toEqual([[1]]);
    const rest = [t.group.submit("", 2), t.group.submit("", 3)];
    await settle();
    expect(t.writes).toEqual([[1]]); // waiting for the write in flight
    await t.answer();
    expect(t.writes).toEqual([[1], [2, 3]]);
    await t.answer();
    expect(await Promise.all([first, ...rest])).toEqual([2, 4, 6]);
    // The line emptied: the next call is written at once again.
    void t.group.submit("", 4);
    await settle();
    expect(t.writes).toEqual([[1], [2, 3], [4]]);
  });

  it("keeps each line to itself", async () => {
    const t = held();
    void t.group.submit("a", 1);
    void t.group.submit("b", 2);
    void t.group.submit("a", 3);
    await settle();
    expect(t.writes).toEqual([[1], [2]]);
  });

  it("bounds a write by calls and by weight; a call heavier than the bound goes alone", async () => {
    const t = held({ maxCalls: 2, maxWeight: 10 });
    const all = [1, 2, 3, 4, 20, 5].map((n) => t.group.submit("", n));
    await settle();
    for (let i = 0; i < 5; i++) await t.answer();
    expect(t.writes).toEqual([[1], [2, 3], [4], [20], [5]]);
    expect(await Promise.all(all)).toEqual([2, 4, 6, 8, 40, 10]);
  });

  it("fails only the call a write answers with an Error, and a whole group when the write fails; the next group still goes", async () => {
    const t = held();
    // Each call's answer or error, caught at once (a rejection nobody awaits yet is unhandled).
    const outcome = (p: Promise<number>) => p.catch((err: Error) => err.message);
    const first = outcome(t.group.submit("", 1));
    await settle();
    const next = [2, 3, 4].map((n) => outcome(t.group.submit("", n)));
    await t.answer((inputs) => new Error(`write of ${inputs} failed`));
    expect(await first).toBe("write of 1 failed");
    expect(t.writes).toEqual([[1], [2, 3, 4]]);
    await t.answer(() => [6, new Error("not 3"), 8]);
    expect(await Promise.all(next)).toEqual([6, "not 3", 8]);
  });

  it("fails the group of a write that throws at once, and goes on", async () => {
    let calls = 0;
    const group = new GroupCommit<number, number>({
      write: (inputs) => {
        if (calls++ === 0) throw new Error("thrown");
        return Promise.resolve(inputs);
      },
      maxCalls: 10,
    });
    await expect(group.submit("", 1)).rejects.toThrow("thrown");
    expect(await group.submit("", 2)).toBe(2);
  });
});
