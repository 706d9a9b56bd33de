import { describe, expect, it } from "vitest";
import { settle } from "../../src/domain/clock.js";
import type { NewJob } from "../../src/domain/job-record.js";
import { limits } from "../../src/domain/limits.js";
import { groupedCallMaxJobs } from "../../src/engine/insert-groups.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { setup } from "./harness.js";

/** A memory store whose inserts are recorded and held until released: a slow store's writes in flight. */
function slowStore() {
  const store = new MemoryStore();
  const insert = store.jobInsertMany.bind(store);
  const writes: NewJob[][] = [];
  const held: Array<() => void> = [];
  let failNext: Error | undefined;
  store.jobInsertMany = async (p) => {
    writes.push(p.jobs);
    await new Promise<void>((release) => held.push(release));
    const err = failNext;
    failNext = undefined;
    if (err) throw err;
    return insert(p);
  };
  return {
    store,
    /** The jobs of each jobInsertMany call so far. */
    writes,
    /** Lets the oldest held write go on, and lets its callers see the answer. */
    release: async () => {
      await settle();
      const next = held.shift();
      if (!next) throw new Error("no write is in flight");
      next();
      await settle();
    },
    failNextWrite: (err: Error) => (failNext = err),
  };
}

describe("Enqueue's group commit", () => {
  it("writes a lone call at once, and the calls that arrive during a write as one write after it", async () => {
    const slow = slowStore();
    const t = await setup({ store: slow.store });
    const first = t.enqueue({ customStatus: "a" });
    await settle();
    expect(slow.writes.map((w) => w.length)).toEqual([1]); // no waiting for company
    const rest = [t.enqueue({ customStatus: "b" }), t.enqueue({ customStatus: "c" }, { customStatus: "d" })];
    await settle();
    expect(slow.writes).toHaveLength(1); // b, c and d wait for the write in flight
    await slow.release();
    expect(slow.writes.map((w) => w.length)).toEqual([1, 3]);
    await slow.release();
    const [[a], [b], [c, d]] = await Promise.all([first, ...rest]);
    // Each call gets the ids of its own jobs, in its order.
    for (const [id, status] of [
      [a, "a"],
      [b, "b"],
      [c, "c"],
      [d, "d"],
    ] as const)
      expect(new TextDecoder().decode((await t.job(id!))!.body)).toBe(status);
    expect(new Set([a, b, c, d]).size).toBe(4);
    expect((await t.dequeue(10)).map((j) => j.id)).toEqual([a, b, c, d]);
  });

  it("resolves an idempotency key across the calls of one group as across separate calls", async () => {
    const slow = slowStore();
    const t = await setup({ store: slow.store });
    const first = t.enqueue({});
    const twice = [t.enqueue({ idempotencyKey: "k" }), t.enqueue({ idempotencyKey: "k" })];
    await slow.release();
    await slow.release();
    await first;
    const [[one], [two]] = await Promise.all(twice);
    expect(two).toBe(one);
    expect(slow.writes.map((w) => w.length)).toEqual([1, 2]);
  });

  it("does not group calls of different queues, nor calls larger than the grouped size", async () => {
    const slow = slowStore();
    const t = await setup({ store: slow.store });
    await t.engine.createQueue("other", {});
    const calls = [
      t.enqueue({}),
      t.engine.enqueue([{ ...t.spec(), queue: "other" }]),
      t.enqueue(...Array.from({ length: groupedCallMaxJobs + 1 }, () => ({}))),
    ];
    await settle();
    // Three writes in flight at once: one per queue, and the large call on its own.
    expect(slow.writes.map((w) => w.length)).toEqual([1, 1, groupedCallMaxJobs + 1]);
    for (let i = 0; i < 3; i++) await slow.release();
    await Promise.all(calls);
  });

  it("fails every call of a failed write and goes on with the calls after it", async () => {
    const slow = slowStore();
    const t = await setup({ store: slow.store });
    const first = t.enqueue({}).catch((err: unknown) => err);
    const group = [t.enqueue({}), t.enqueue({})];
    slow.failNextWrite(new Error("store down"));
    await slow.release(); // the first write fails
    expect(String(await first)).toContain("store down");
    const after = t.enqueue({});
    await slow.release(); // the group of two
    await slow.release();
    expect(await Promise.all(group)).toHaveLength(2);
    expect(await after).toHaveLength(1);
    expect(slow.writes.map((w) => w.length)).toEqual([1, 2, 1]);
  });

  it("writes at most an Enqueue batch's worth of jobs at once", async () => {
    const slow = slowStore();
    const t = await setup({ store: slow.store });
    const calls = [t.enqueue({})];
    const big = Array.from({ length: groupedCallMaxJobs }, () => ({}));
    const perWrite = Math.floor(limits.enqueueBatchMax / groupedCallMaxJobs);
    for (let i = 0; i < perWrite + 1; i++) calls.push(t.enqueue(...big));
    await settle();
    await slow.release();
    await slow.release();
    await slow.release();
    await Promise.all(calls);
    expect(slow.writes.map((w) => w.length)).toEqual([1, perWrite * groupedCallMaxJobs, groupedCallMaxJobs]);
  });
});
