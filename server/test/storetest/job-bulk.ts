import { describe, expect, it } from "vitest";
import { createQueue, get, handOut, insert, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

/** Runs every due job of `q` once and fails it for good. */
async function failAll(store: Awaited<ReturnType<OpenStore>>, q: string, now = T0) {
  const jobs = await handOut(store, q, { now });
  await store.jobFailMany({
    items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "", noRetry: true })),
    now,
  });
  return jobs;
}

export function exerciseJobBulk(open: OpenStore): void {
  describe("jobRetryFailed / jobDeleteMany / jobDeleteFinished", () => {
    it("retries at most `limit` failed jobs of a priority with fresh attempts and a run_after", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}, {}, { priority: 2 }]);
      await failAll(store, q);
      const n = await store.jobRetryFailed({
        queue: q,
        priority: 1,
        attemptsAllowed: 4,
        runAfter: T0 + 100,
        limit: 1,
        now: T0,
      });
      expect(n).toBe(1);
      const pending = await store.jobScan({ queue: q, filter: { state: "pending" }, limit: 10, now: T0 });
      expect(pending).toHaveLength(1);
      expect(pending[0]).toMatchObject({ priority: 1, attemptsAllowed: 4, attemptsRemaining: 4, runAfter: T0 + 100 });
      expect(await store.jobRetryFailed({ queue: q, attemptsAllowed: 4, runAfter: T0, limit: 10, now: T0 })).toBe(2);
      expect(await store.jobCount({ queue: q, filter: { state: "failed" }, now: T0 })).toBe(0);
    });

    it("deletes at most `limit` jobs of a state matching the filters; they then look up as absent", async () => {
      const store = await open();
      const q = await createQueue(store);
      const ids = await insert(store, q, [{ body: new TextEncoder().encode("keep") }, {}, {}]);
      expect(
        // biome-ignore lint/suspicious/noControlCharactersInRegex: matches the \x01 byte the other jobs' bodies start with.
        await store.jobDeleteMany({ queue: q, filter: { state: "pending", bodyRegex: /^\x01/ }, limit: 1, now: T0 }),
      ).toBe(1);
      expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(2);
      expect(
        // biome-ignore lint/suspicious/noControlCharactersInRegex: matches the \x01 byte the other jobs' bodies start with.
        await store.jobDeleteMany({ queue: q, filter: { state: "pending", bodyRegex: /^\x01/ }, limit: 10, now: T0 }),
      ).toBe(1);
      expect(await get(store, ids[0]!)).toBeDefined();
      expect((await store.jobGetMany({ ids: ids.slice(1) })).every((j) => j === undefined)).toBe(true);
    });

    it("garbage-collects finished jobs by finishing time and state-specific retention", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}, {}]);
      const [ok, bad] = await handOut(store, q);
      await store.jobCompleteMany({
        items: [{ id: ok!.id, claimToken: ok!.claimToken, customStatus: "" }],
        now: T0 + 100,
      });
      await store.jobFailMany({
        items: [{ id: bad!.id, claimToken: bad!.claimToken, customStatus: "", noRetry: true }],
        now: T0 + 100,
      });
      // Retention is measured from finishing (T0+100), not from run_after (T0).
      expect(
        await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 100, failedBefore: T0 + 100, limit: 10 }),
      ).toBe(0);
      expect(
        await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 101, failedBefore: T0 + 50, limit: 10 }),
      ).toBe(1);
      expect(await get(store, ok!.id)).toBeUndefined();
      expect(await get(store, bad!.id)).toBeDefined();
      expect(
        await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 101, failedBefore: T0 + 101, limit: 10 }),
      ).toBe(1);
      expect(await get(store, bad!.id)).toBeUndefined();
    });

    it("does not collect a failed job that was retried", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [id] = await insert(store, q, [{}]);
      await failAll(store, q);
      await store.jobRetryFailed({ queue: q, attemptsAllowed: 1, runAfter: T0, limit: 10, now: T0 });
      expect(
        await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 1e9, failedBefore: T0 + 1e9, limit: 10 }),
      ).toBe(0);
      expect((await get(store, id!))!.state).toBe("pending");
    });
  });
}
