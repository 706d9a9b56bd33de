/**
 * The MySQL claim writes nothing: the jobs it returns stay pending in the table and are held
 * in the claiming store object's memory (held-jobs.ts), and each priority level's next claim
 * goes on after a cursor. What the shared suite cannot see from one store object: jobs that
 * turn up behind the cursor (through another process, or committed while a claim was
 * reading), a claim that fails half-way, other processes' view, and rows an earlier runlater
 * marked buffered. The store's `select` is wrapped for this file only, to act in the middle
 * of a claim.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { RESCAN_EVERY_MS } from "../../src/store/mysql/held-jobs.js";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { Shard } from "../../src/store/mysql/shard.js";
import { newJob, T0 } from "../storetest/fixtures.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

/** Runs once, right after the next claim read of rows returns (set by a test); may throw to fail the claim there. */
const afterClaimRead: { fn?: () => Promise<void> } = {};
/** Runs once, before the next start's UPDATE (set by a test); may throw to fail the start. */
const beforeStart: { fn?: () => Promise<void> } = {};

vi.mock("../../src/store/mysql/shard.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/store/mysql/shard.js")>();
  return {
    ...original,
    select: async (...args: Parameters<typeof original.select>) => {
      const rows = await original.select(...args);
      if (
        /queued_state = 'pending' AND priority = \? AND run_after <= \?.* LIMIT \?$/.test(args[1]) &&
        !args[1].startsWith("SELECT id, run_after, seq")
      ) {
        const fn = afterClaimRead.fn;
        afterClaimRead.fn = undefined;
        await fn?.();
      }
      return rows;
    },
    run: async (...args: Parameters<typeof original.run>) => {
      if (args[1].startsWith("UPDATE jobs JOIN leases")) {
        const fn = beforeStart.fn;
        beforeStart.fn = undefined;
        await fn?.();
      }
      return original.run(...args);
    },
  };
});

const url = freshDatabaseUrl("held");
let store: MysqlStore;
let other: MysqlStore;
let n = 0;

beforeAll(async () => {
  store = await openMysqlStore([url], { connectionLimit: 4 });
  // Another server process: its own store object, so its own (empty) held jobs.
  other = await openMysqlStore([url], { connectionLimit: 2 });
}, 60_000);

afterAll(() => dropDatabases(store, other));

/** A queue with `count` due jobs one millisecond apart, and this store's lease on its partition. */
async function queueWithJobs(count: number): Promise<{ queue: string; ids: string[]; epoch: number }> {
  const queue = `held_${++n}`;
  await store.queueCreate({ name: queue, config: resolveQueueConfig({}), now: T0 });
  const ids = await store.jobInsertMany({
    jobs: Array.from({ length: count }, (_, i) => newJob(queue, { runAfter: T0 - 1000 + i })),
    now: T0,
  });
  const lease = await store.leaseAcquire({ queue, partition: 0, owner: "a", ttlMs: 600_000, now: T0 });
  return { queue, ids, epoch: lease!.epoch };
}

const idsOf = (jobs: Array<{ id: string }>) => jobs.map((j) => j.id);

describe("mysql claim holds jobs in memory", () => {
  it("writes nothing: claimed jobs read as buffered here and as pending through another process", async () => {
    const { queue, ids, epoch } = await queueWithJobs(3);
    const claimed = await store.jobClaimMany({ queue, partition: 0, epoch, limit: 2, now: T0 });
    expect(idsOf(claimed)).toEqual(ids.slice(0, 2));
    expect((await store.jobGetMany({ ids })).map((j) => j!.state)).toEqual(["buffered", "buffered", "pending"]);
    expect((await other.jobGetMany({ ids })).map((j) => j!.state)).toEqual(["pending", "pending", "pending"]);
    // The next claim goes on after them.
    expect(idsOf(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 }))).toEqual([ids[2]]);
  });

  it("finds a job another process queued behind the cursor by the periodic rescan", async () => {
    const { queue, ids, epoch } = await queueWithJobs(3);
    await store.jobClaimMany({ queue, partition: 0, epoch, limit: 2, now: T0 });
    const [behind] = await other.jobInsertMany({ jobs: [newJob(queue, { runAfter: T0 - 5000 })], now: T0 });
    // This store object was not told: the claim goes on after its cursor...
    expect(idsOf(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 + 1 }))).toEqual([ids[2]]);
    expect(await store.jobNextDueAt({ queue, partition: 0 })).toBeUndefined();
    // ...until the level is looked at from its start again, RESCAN_EVERY_MS after the last look.
    expect(
      idsOf(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 + RESCAN_EVERY_MS })),
    ).toEqual([behind]);
  });

  it("claims next a job this store queued behind the cursor, even one that committed while a claim was reading", async () => {
    const { queue, ids, epoch } = await queueWithJobs(4);
    let behind = "";
    afterClaimRead.fn = async () => {
      // Committed after the claim's read, before the claim moved its cursor past its place.
      [behind] = await store.jobInsertMany({ jobs: [newJob(queue, { runAfter: T0 - 1000 })], now: T0 });
    };
    expect(idsOf(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 2, now: T0 }))).toEqual(ids.slice(0, 2));
    expect(behind).not.toBe("");
    expect(await store.jobNextDueAt({ queue, partition: 0 })).toBe(T0 - 1000);
    // Same clock: no periodic rescan; the note from the insert is what finds it.
    expect(idsOf(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 }))).toEqual([
      behind,
      ids[2],
      ids[3],
    ]);
  });

  it("a claim that fails half-way holds nothing, and the next claim finds every job", async () => {
    const { queue, ids, epoch } = await queueWithJobs(2);
    const [worse] = await store.jobInsertMany({ jobs: [newJob(queue, { priority: 2, runAfter: T0 - 2000 })], now: T0 });
    // The first level's read succeeds (its cursor moves past both jobs), the second's fails.
    afterClaimRead.fn = async () => {
      afterClaimRead.fn = async () => {
        throw new Error("connection lost");
      };
    };
    await expect(store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 })).rejects.toThrow(
      "connection lost",
    );
    expect((await store.jobGetMany({ ids: [...ids, worse!] })).map((j) => j!.state)).toEqual([
      "pending",
      "pending",
      "pending",
    ]);
    expect(idsOf(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 }))).toEqual([
      ...ids,
      worse,
    ]);
  });

  it("a start that fails holds nothing: the jobs it did not start are claimed again", async () => {
    const { queue, ids, epoch } = await queueWithJobs(2);
    await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 });
    beforeStart.fn = async () => {
      throw new Error("connection lost");
    };
    const plans = ids.map((id) => ({ id, claimToken: "t", claimExpiresAt: T0 + 1000, retryDelayMs: 0 }));
    await expect(store.jobStartMany({ queue, partition: 0, epoch, plans, now: T0 })).rejects.toThrow("connection lost");
    expect(idsOf(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 }))).toEqual(ids);
  });

  it("a new owner claims what the old one held; the old owner can no longer start it", async () => {
    const { queue, ids, epoch } = await queueWithJobs(2);
    await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 });
    const taken = await other.leaseAcquire({ queue, partition: 0, owner: "b", ttlMs: 600_000, now: T0 + 700_000 });
    expect(
      idsOf(await other.jobClaimMany({ queue, partition: 0, epoch: taken!.epoch, limit: 10, now: T0 + 700_000 })),
    ).toEqual(ids);
    const plans = ids.map((id) => ({ id, claimToken: "old", claimExpiresAt: T0 + 800_000, retryDelayMs: 0 }));
    expect(await store.jobStartMany({ queue, partition: 0, epoch, plans, now: T0 + 700_000 })).toEqual([]);
    const newPlans = ids.map((id) => ({ id, claimToken: "new", claimExpiresAt: T0 + 800_000, retryDelayMs: 0 }));
    expect(
      await other.jobStartMany({ queue, partition: 0, epoch: taken!.epoch, plans: newPlans, now: T0 + 700_000 }),
    ).toEqual(ids);
    expect((await store.jobGetMany({ ids })).map((j) => j!.claimToken)).toEqual(["new", "new"]);
  });

  it("a new owner releases rows an earlier runlater marked buffered in the table", async () => {
    const { queue, ids } = await queueWithJobs(2);
    const shard = new Shard(0, url, { retryForMs: 5000, connectionLimit: 1 });
    await shard.session((c) =>
      c.query("UPDATE jobs SET state = 'buffered', buffer_epoch = 1 WHERE queue = ?", [queue]),
    );
    await shard.close();
    const taken = await other.leaseAcquire({ queue, partition: 0, owner: "b", ttlMs: 600_000, now: T0 + 700_000 });
    expect(
      await other.jobClaimMany({ queue, partition: 0, epoch: taken!.epoch, limit: 10, now: T0 + 700_000 }),
    ).toEqual([]);
    expect(await other.jobReleaseBuffered({ queue, partition: 0, belowEpoch: taken!.epoch })).toBe(2);
    expect(
      idsOf(await other.jobClaimMany({ queue, partition: 0, epoch: taken!.epoch, limit: 10, now: T0 + 700_000 })),
    ).toEqual(ids);
  });
});
