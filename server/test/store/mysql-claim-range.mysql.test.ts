/**
 * The MySQL claim marks each level's rows buffered by their range of jobs_claim, not by
 * id. A job inserted inside that range between the claim's read and its mark (READ
 * COMMITTED takes no gap locks) must not be marked without being returned: the claim
 * rolls back and marks by id. The insert is made to land there by running it just
 * before the range UPDATE (the store's `run` is wrapped for this file only).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resolveQueueConfig } from "../../src/engine/queue-config.js";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { newJob, T0 } from "../../src/store/storetest/fixtures.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

/** Runs once, just before the next range mark (set by the test). */
const beforeRangeMark: { fn?: () => Promise<void> } = {};
let rangeMarks = 0;

vi.mock("../../src/store/mysql/shard.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/store/mysql/shard.js")>();
  return {
    ...original,
    run: async (...args: Parameters<typeof original.run>) => {
      if (/^UPDATE jobs SET .* BETWEEN/.test(args[1])) {
        rangeMarks++;
        const fn = beforeRangeMark.fn;
        beforeRangeMark.fn = undefined;
        await fn?.();
      }
      return original.run(...args);
    },
  };
});

const url = freshDatabaseUrl("claim_range");
let store: MysqlStore;
let other: MysqlStore;
const queue = "claim_range_q";

beforeAll(async () => {
  store = await openMysqlStore([url], { connectionLimit: 4 });
  other = await openMysqlStore([url], { connectionLimit: 2 });
  await store.queueCreate({ name: queue, config: resolveQueueConfig({}), now: T0 });
}, 60_000);

afterAll(async () => {
  await store?.close();
  await other?.close();
  await dropDatabases();
});

describe("mysql claim marks by range", () => {
  it("never leaves a job buffered that the claim did not return, when one is inserted inside the claimed range", async () => {
    const [early, late] = await store.jobInsertMany({
      jobs: [newJob(queue, { runAfter: T0 - 3000 }), newJob(queue, { runAfter: T0 - 1000 })],
      now: T0,
    });
    const lease = await store.leaseAcquire({ queue, partition: 0, owner: "b", ttlMs: 60_000, now: T0 });
    let between = "";
    beforeRangeMark.fn = async () => {
      // Committed through another pool: due, and between the two claimed jobs in dequeue order.
      [between] = await other.jobInsertMany({ jobs: [newJob(queue, { runAfter: T0 - 2000 })], now: T0 });
    };
    const marksBefore = rangeMarks;
    const claimed = await store.jobClaimMany({ queue, partition: 0, epoch: lease!.epoch, limit: 2, now: T0 });
    expect(rangeMarks).toBe(marksBefore + 1); // the range mark ran (and found one row too many)
    expect(between).not.toBe("");
    const all = await store.jobGetMany({ ids: [early!, between, late!], bodies: false });
    const buffered = all.filter((j) => j!.state === "buffered").map((j) => j!.id);
    // Exactly what was returned is buffered: the retry by id read the new job in its turn.
    expect(buffered.sort()).toEqual(claimed.map((j) => j.id).sort());
    expect(claimed.map((j) => j.id)).toEqual([early, between]);
    expect(all.find((j) => j!.id === late)!.state).toBe("pending");
  });

  it("marks by range when nothing moved: every claimed job buffered, the rest pending", async () => {
    const q2 = "claim_range_levels";
    await store.queueCreate({ name: q2, config: resolveQueueConfig({}), now: T0 });
    const ids = await store.jobInsertMany({ jobs: Array.from({ length: 30 }, (_, i) => newJob(q2, { runAfter: T0 + i, priority: 1 + (i % 3) })), now: T0 });
    const lease = await store.leaseAcquire({ queue: q2, partition: 0, owner: "b", ttlMs: 60_000, now: T0 });
    const marksBefore = rangeMarks;
    const claimed = await store.jobClaimMany({ queue: q2, partition: 0, epoch: lease!.epoch, limit: 25, now: T0 + 100 });
    expect(rangeMarks).toBe(marksBefore + 3); // one range per priority level (10 + 10 + 5 jobs)
    expect(claimed).toHaveLength(25);
    const jobs = await store.jobGetMany({ ids, bodies: false });
    const claimedIds = new Set(claimed.map((j) => j.id));
    for (const job of jobs) expect(job!.state).toBe(claimedIds.has(job!.id) ? "buffered" : "pending");
  });
});
