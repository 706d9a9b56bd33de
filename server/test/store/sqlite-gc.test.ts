/**
 * Retention GC keeps a SQLite store's file bounded: the pages of collected jobs are reused
 * by the jobs that follow, and those beyond a reserve are given back to the file system
 * (free-pages.ts), so rounds of enqueue, work and GC do not grow the file. The figures for a
 * million jobs come from test/bench/sqlite-gc.ts (docs/benchmarks.md).
 */
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { handOut, insert, T0 } from "../storetest/fixtures.js";
import { SqliteFiles } from "./sqlite-harness.js";

const files = new SqliteFiles();
afterAll(() => files.dispose());

/** page_count and freelist_count, as a reader of the file sees them. */
function pages(path: string): { pages: number; free: number } {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    const one = (pragma: string) => Object.values(db.prepare(`PRAGMA ${pragma}`).get()!)[0] as number;
    return { pages: one("page_count"), free: one("freelist_count") };
  } finally {
    db.close();
  }
}

describe("sqlite store: retention GC and the file's size", () => {
  it("reuses and gives back the pages of collected jobs: rounds of work do not grow the file", async () => {
    const path = files.path();
    const store = await files.open(path);
    await store.queueCreate({ name: "q", config: resolveQueueConfig({}), now: T0 });
    const body = new Uint8Array(1024).fill(7);
    const afterRound: Array<{ pages: number; free: number }> = [];
    let peak = 0;
    for (let round = 0; round < 6; round++) {
      const now = T0 + round * 1000;
      for (let i = 0; i < 3; i++)
        await insert(
          store,
          "q",
          Array.from({ length: 1000 }, () => ({ body })),
          now,
        );
      peak = Math.max(peak, pages(path).pages);
      for (let i = 0; i < 3; i++) {
        const jobs = await handOut(store, "q", { limit: 1000, now });
        await store.jobCompleteMany({
          items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "" })),
          now,
        });
      }
      let collected = 0;
      for (let n = -1; n !== 0; collected += n)
        n = await store.jobDeleteFinished({ queue: "q", succeededBefore: now + 1, failedBefore: now + 1, limit: 1000 });
      expect(collected).toBe(3000);
      afterRound.push(pages(path));
    }
    // 3,000 jobs of 1 KiB are some 1,000 pages: collected, most of them go back to the file system.
    for (const r of afterRound) {
      expect(r.free).toBeLessThanOrEqual(Math.max(256, r.pages / 8));
      expect(r.pages).toBeLessThan(peak / 2);
    }
    // Later rounds reuse what earlier ones freed: the high-water mark stays where the first put it.
    expect(peak).toBeLessThan(1500);
  });
});
