/**
 * The SQLite store's bounds: work over a whole queue (count, scan, DeleteJobs,
 * RetryFailedJobs, DeleteQueue) runs as operations of at most CHUNK jobs each, exact across
 * chunk boundaries (tested at the bound), with other calls answered between them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { CHUNK } from "../../src/store/sqlite/store-functions.js";
import { handOut, insert, T0 } from "../storetest/fixtures.js";
import { SqliteFiles } from "./sqlite-harness.js";

const files = new SqliteFiles();
afterAll(() => files.dispose());

/** A new queue with `n` jobs: priorities 1 and 2 alternating, bodies "job <i>". */
async function queueWith(store: SqliteStore, name: string, n: number): Promise<string[]> {
  await store.queueCreate({ name, config: resolveQueueConfig({}), now: T0 });
  const ids: string[] = [];
  for (let i = 0; i < n; i += 1000)
    ids.push(
      ...(await insert(
        store,
        name,
        Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({
          priority: 1 + ((i + k) % 2),
          runAfter: T0 - (i + k),
          body: new TextEncoder().encode(`job ${i + k}`),
        })),
      )),
    );
  return ids;
}

describe("sqlite store: walks over a queue, a chunk at a time", () => {
  it("counts, scans and deletes exactly at and around the chunk bound", async () => {
    const store = await files.open();
    for (const n of [CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK + 500]) {
      const q = `walk_${n}`;
      const ids = await queueWith(store, q, n);
      const odd = Math.floor(n / 2);
      expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(n);
      expect(await store.jobCount({ queue: q, filter: { priority: 2 }, now: T0 })).toBe(odd);
      expect(await store.jobCount({ queue: q, filter: { bodyRegex: /^job \d*7$/ }, now: T0 })).toBe(
        ids.filter((_, i) => i % 10 === 7).length,
      );
      // A page that ends past a chunk boundary, then the next page from its cursor.
      const first = await store.jobScan({ queue: q, filter: { priority: 2 }, limit: 600, now: T0 });
      const last = first[first.length - 1]!;
      const rest = await store.jobScan({
        queue: q,
        filter: { priority: 2 },
        limit: 100_000,
        cursor: { runAfter: last.runAfter, id: last.id },
        now: T0,
      });
      expect(first.length + rest.length).toBe(odd);
      expect(new Set([...first, ...rest].map((j) => j.id)).size).toBe(odd);
      expect(await store.jobDeleteMany({ queue: q, filter: { priority: 1 }, limit: n, now: T0 })).toBe(n - odd);
      expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(odd);
    }
  });

  it("answers other calls while a count walks a big queue", async () => {
    const store = await files.open();
    const ids = await queueWith(store, "big", 5 * CHUNK);
    const order: string[] = [];
    const count = store
      .jobCount({ queue: "big", filter: { priority: 1 }, now: T0 })
      .then((n) => order.push(`count ${n}`));
    // Sent after the walk's first chunk: answered before its last.
    await Promise.resolve();
    const lookup = store.jobGetMany({ ids: [ids[0]!] }).then((jobs) => order.push(`lookup ${jobs.length}`));
    await Promise.all([count, lookup]);
    expect(order).toEqual(["lookup 1", `count ${2.5 * CHUNK}`]);
  });

  it("retries at most `limit` failed jobs across chunks, oldest failure first", async () => {
    const store = await files.open();
    await queueWith(store, "retry", 2 * CHUNK + 10);
    const running = [];
    for (let i = 0; i < 3; i++) running.push(...(await handOut(store, "retry", { limit: 1000, now: T0 + i })));
    expect(running).toHaveLength(2 * CHUNK + 10);
    for (const [i, job] of running.entries())
      await store.jobFailMany({
        items: [{ id: job.id, claimToken: job.claimToken, customStatus: "", noRetry: true }],
        now: T0 + i,
      });
    const retried = await store.jobRetryFailed({
      queue: "retry",
      priority: 2,
      attemptsAllowed: 1,
      runAfter: T0,
      limit: CHUNK,
      now: T0,
    });
    expect(retried).toBe(CHUNK);
    const back = await store.jobGetMany({ ids: running.map((j) => j.id) });
    const wanted = running
      .filter((j) => j.priority === 2)
      .slice(0, CHUNK)
      .map((j) => j.id);
    expect(back.filter((j) => j?.state === "pending").map((j) => j!.id)).toEqual(wanted);
  });

  it("deletes a big queue a chunk at a time: gone at once for everyone, created again only after", async () => {
    const store = await files.open();
    const ids = await queueWith(store, "doomed", 3 * CHUNK + 1);
    const deleting = store.queueDelete({ name: "doomed" });
    await Promise.resolve(); // the delete has begun
    const [during, createdAgain] = await Promise.all([
      store.jobGetMany({ ids: [ids[ids.length - 1]!] }),
      store.queueCreate({ name: "doomed", config: resolveQueueConfig({ priorities: 7 }), now: T0 + 1 }),
    ]);
    expect(await deleting).toBe(true);
    expect(during).toEqual([undefined]);
    expect(createdAgain).toMatchObject({ created: true, queue: { config: { priorities: 7 } } });
    expect(await store.jobCount({ queue: "doomed", filter: {}, now: T0 })).toBe(0);
    expect(await store.queueStats({ name: "doomed", now: T0 })).toMatchObject({ pending: 0, running: 0 });
    expect((await store.jobGetMany({ ids: ids.slice(0, 10) })).every((j) => j === undefined)).toBe(true);
  });
});
