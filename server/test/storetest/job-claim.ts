import { describe, expect, it } from "vitest";
import type { ClaimStart, Store } from "../../src/store/store.js";
import { createQueue, get, handOut, insert, lease, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseJobClaim(open: OpenStore): void {
  describe("jobClaimMany / jobStartMany / jobPeekMany", () => {
    it("claims by priority, then run_after, then enqueue order, up to the limit", async () => {
      const store = await open();
      const q = await createQueue(store);
      const ids = await insert(store, q, [
        { priority: 2, runAfter: T0 - 10 }, // 0
        { priority: 1, runAfter: T0 - 1 }, // 1
        { priority: 1, runAfter: T0 - 5 }, // 2
        { priority: 3, runAfter: T0 - 50 }, // 3
        { priority: 1, runAfter: T0 - 1 }, // 4: ties with 1, enqueued later
      ]);
      const epoch = await lease(store, q);
      const first = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 4, now: T0 });
      expect(first.map((j) => j.id)).toEqual([ids[2], ids[1], ids[4], ids[0]]);
      expect(first.every((j) => j.state === "buffered" && j.bufferEpoch === epoch)).toBe(true);
      const rest = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 4, now: T0 });
      expect(rest.map((j) => j.id)).toEqual([ids[3]]);
    });

    it("claims next a due job enqueued behind jobs already buffered (a past run_after)", async () => {
      const store = await open();
      const q = await createQueue(store);
      const ids = await insert(store, q, [{ runAfter: T0 - 30 }, { runAfter: T0 - 20 }, { runAfter: T0 - 10 }]);
      const epoch = await lease(store, q);
      expect((await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 2, now: T0 })).map((j) => j.id)).toEqual(
        ids.slice(0, 2),
      );
      const [behind] = await insert(store, q, [{ runAfter: T0 - 25 }]);
      expect(await store.jobNextDueAt({ queue: q, partition: 0 })).toBe(T0 - 25);
      expect(
        (await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 })).map((j) => j.id),
      ).toEqual([behind, ids[2]]);
    });

    it("skips a better priority whose jobs are not yet due, without losing its place", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [later, due] = await insert(store, q, [{ priority: 1, runAfter: T0 + 1000 }, { priority: 2 }]);
      const epoch = await lease(store, q);
      expect(
        (await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 })).map((j) => j.id),
      ).toEqual([due]);
      expect(
        (await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 + 1000 })).map((j) => j.id),
      ).toEqual([later]);
    });

    it("does not claim jobs before their run_after, and reports when the next is due", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [later] = await insert(store, q, [{ runAfter: T0 + 5000 }]);
      const epoch = await lease(store, q);
      expect(await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 })).toEqual([]);
      expect(await store.jobNextDueAt({ queue: q, partition: 0 })).toBe(T0 + 5000);
      const due = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 + 5000 });
      expect(due.map((j) => j.id)).toEqual([later]);
    });

    it("claims only from the named partition", async () => {
      const store = await open();
      const q = await createQueue(store, { partitions: 2 });
      const [p0, p1] = await insert(store, q, [{ partition: 0 }, { partition: 1 }]);
      const epoch = await lease(store, q, 1);
      const claimed = await store.jobClaimMany({ queue: q, partition: 1, epoch, limit: 10, now: T0 });
      expect(claimed.map((j) => j.id)).toEqual([p1]);
      expect((await get(store, p0!))!.state).toBe("pending");
    });

    it("refuses to claim or start under an epoch that is not the lease's", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const epoch = await lease(store, q);
      expect(await store.jobClaimMany({ queue: q, partition: 0, epoch: epoch + 1, limit: 10, now: T0 })).toEqual([]);
      const [claimed] = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 });
      const plan = { id: claimed!.id, claimToken: "t", claimExpiresAt: T0 + 1000, retryDelayMs: 0 };
      expect(await store.jobStartMany({ queue: q, partition: 0, epoch: epoch + 1, plans: [plan], now: T0 })).toEqual(
        [],
      );
      expect((await get(store, claimed!.id))!.state).toBe("buffered");
    });

    it("starting charges one attempt and records the claim", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ attemptsAllowed: 2 }]);
      const [job] = await handOut(store, q, { claimMs: 700, retryDelayMs: 1234 });
      expect(job).toMatchObject({
        state: "running",
        attempt: 1,
        attemptsAllowed: 2,
        attemptsRemaining: 1,
        claimExpiresAt: T0 + 700,
        retryDelayMs: 1234,
      });
      expect(job!.claimToken).not.toBe("");
      expect(await handOut(store, q)).toEqual([]); // a running job is not handed out again
    });

    it("a batch under one claim token starts the jobs still buffered and names only those", async () => {
      // The broker gives one token, expiry and retry delay to a whole hand-out batch.
      const store = await open();
      const q = await createQueue(store);
      const [, deleted] = await insert(store, q, [{}, { priority: 2 }, { attemptsAllowed: 1 }]);
      const epoch = await lease(store, q);
      const claimed = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 });
      expect(claimed).toHaveLength(3);
      expect(await store.jobDeleteMany({ queue: q, filter: { priority: 2 }, limit: 10, now: T0 })).toBe(1);
      const plans = claimed.map((j) => ({ id: j.id, claimToken: "one", claimExpiresAt: T0 + 500, retryDelayMs: 10 }));
      const started = await store.jobStartMany({ queue: q, partition: 0, epoch, plans, now: T0 + 1 });
      expect(started).toEqual(claimed.map((j) => j.id).filter((id) => id !== deleted));
      for (const id of started) {
        const job = await get(store, id);
        expect(job).toMatchObject({
          state: "running",
          claimToken: "one",
          claimExpiresAt: T0 + 500,
          retryDelayMs: 10,
          attempt: 1,
          bufferEpoch: 0,
          updatedAt: T0 + 1,
        });
        expect(job!.attemptsRemaining).toBe(job!.attemptsAllowed - 1);
      }
      // Started again under the same token: nothing is buffered any more, nothing starts.
      expect(await store.jobStartMany({ queue: q, partition: 0, epoch, plans, now: T0 + 2 })).toEqual([]);
    });

    it("peeks due jobs, buffered ones included, without changing anything", async () => {
      const store = await open();
      const q = await createQueue(store);
      const ids = await insert(store, q, [{ priority: 2 }, {}, { runAfter: T0 + 1000 }]);
      const epoch = await lease(store, q);
      await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 1, now: T0 }); // buffers ids[1]
      const peek1 = await store.jobPeekMany({ queue: q, limit: 10, now: T0 });
      const peek2 = await store.jobPeekMany({ queue: q, limit: 10, now: T0 });
      expect(peek1.map((j) => j.id)).toEqual([ids[1], ids[0]]);
      expect(peek2.map((j) => j.id)).toEqual(peek1.map((j) => j.id));
      expect((await get(store, ids[0]!))!.state).toBe("pending");
      expect(Array.from(peek1[0]!.body)).toEqual([1, 2, 3]);
    });

    it("stops a claim before the body that would pass maxBytes, in order, but always claims the first", async () => {
      const store = await open();
      const q = await createQueue(store);
      const body = (n: number) => new Uint8Array(n).fill(7);
      const ids = await insert(store, q, [
        { body: body(100) }, // 0
        { body: body(100) }, // 1
        { body: body(500) }, // 2: does not fit after 0 and 1
        { body: body(10) }, // 3: would fit, but comes after 2
        { priority: 2, body: body(10) }, // 4
      ]);
      const epoch = await lease(store, q);
      const claim = (maxBytes: number) =>
        store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, maxBytes, now: T0 });
      const first = await claim(300);
      expect(first.map((j) => j.id)).toEqual([ids[0], ids[1]]);
      expect(first.map((j) => j.body.length)).toEqual([100, 100]);
      expect((await get(store, ids[2]!))!.state).toBe("pending");
      const big = await claim(50); // bigger than the bound: claimed alone
      expect(big.map((j) => j.id)).toEqual([ids[2]]);
      expect(Array.from(big[0]!.body.slice(0, 3))).toEqual([7, 7, 7]);
      expect((await claim(15)).map((j) => j.id)).toEqual([ids[3]]); // the bound ends the claim across priorities too
      expect((await claim(1000)).map((j) => j.id)).toEqual([ids[4]]);
    });

    it("takes a batch of thousands through insert, claim, start and ACK, one call each", async () => {
      // A broker with --buffer-size 8000 claims that many at once when its buffer is empty.
      const store = await open();
      const q = await createQueue(store);
      const n = 9000;
      const ids = await insert(
        store,
        q,
        Array.from({ length: n }, () => ({})),
      );
      expect(ids).toHaveLength(n);
      const epoch = await lease(store, q);
      const claimed = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: n, now: T0 });
      expect(claimed).toHaveLength(n);
      const plans = claimed.map((j) => ({ id: j.id, claimToken: "big", claimExpiresAt: T0 + 500, retryDelayMs: 10 }));
      expect(await store.jobStartMany({ queue: q, partition: 0, epoch, plans, now: T0 })).toHaveLength(n);
      const acked = await store.jobCompleteMany({
        items: ids.map((id) => ({ id, claimToken: "big", customStatus: "" })),
        now: T0 + 1,
      });
      expect(acked.every((r) => r.outcome === "acknowledged")).toBe(true);
      expect(await store.jobCount({ queue: q, filter: { state: "succeeded" }, now: T0 + 1 })).toBe(n);
    });

    it("releases buffered jobs back to pending, charging nothing", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [id] = await insert(store, q, [{}]);
      const epoch = await lease(store, q);
      const before = (await get(store, id!))!.updatedAt;
      await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 + 5 });
      // Users see a buffered job as pending: neither move changes when it last changed.
      expect((await get(store, id!))!.updatedAt).toBe(before);
      expect(await store.jobReleaseBuffered({ queue: q, partition: 0, epoch, ids: [id!] })).toBe(1);
      expect(await get(store, id!)).toMatchObject({ state: "pending", attemptsRemaining: 3, updatedAt: before });
      const again = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 + 6 });
      expect(again.map((j) => j.id)).toEqual([id]);
    });

    describe("a claim that hands out too (start)", () => {
      const start = (o: Partial<ClaimStart> = {}): ClaimStart => ({
        claimToken: "tok-start",
        claimExpiresAt: T0 + 30_000,
        retryDelayMs: 2500,
        max: 10,
        maxBytes: 1_000_000,
        ...o,
      });
      /** A claim of up to 10 jobs of partition 0 that hands out per `start(o)`. */
      const claimStarting = (store: Store, queue: string, epoch: number, o: Partial<ClaimStart> = {}, now = T0) =>
        store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now, start: start(o) });

      it("hands out its leading jobs, best first, up to max, running as jobStartMany makes them; buffers the rest", async () => {
        const store = await open();
        const q = await createQueue(store);
        const ids = await insert(store, q, [{ priority: 2 }, { priority: 1 }, { priority: 1 }]);
        const epoch = await lease(store, q);
        const claimed = await claimStarting(store, q, epoch, { max: 2 });
        expect(claimed.map((j) => [j.id, j.state])).toEqual([
          [ids[1], "running"],
          [ids[2], "running"],
          [ids[0], "buffered"],
        ]);
        for (const job of claimed.slice(0, 2)) {
          expect(job).toMatchObject({
            attempt: 1,
            claimToken: "tok-start",
            claimExpiresAt: T0 + 30_000,
            retryDelayMs: 2500,
          });
          // The store holds what the answer says.
          expect(await get(store, job.id)).toMatchObject({
            state: "running",
            attempt: 1,
            attemptsRemaining: job.attemptsRemaining,
            claimToken: "tok-start",
            claimExpiresAt: T0 + 30_000,
          });
        }
        // The buffered one starts as any other, under the epoch.
        expect(
          await store.jobStartMany({
            queue: q,
            partition: 0,
            epoch,
            plans: [{ id: ids[0]!, claimToken: "tok-2", claimExpiresAt: T0 + 30_000, retryDelayMs: 1000 }],
            now: T0,
          }),
        ).toEqual([ids[0]]);
        const counts = await store.queueStats({ name: q, now: T0 });
        expect(counts?.running).toBe(3);
        // ACKed with the claim's token, a handed-out job succeeds.
        const [acked] = await store.jobCompleteMany({
          items: [{ id: ids[1]!, claimToken: "tok-start", customStatus: "" }],
          now: T0 + 1,
        });
        expect(acked?.outcome).toBe("acknowledged");
      });

      it("stops at the first job on a later attempt: nothing handed out is worse than one left buffered", async () => {
        const store = await open();
        const q = await createQueue(store);
        const [retried] = await insert(store, q, [{ priority: 1 }]);
        const [job] = await handOut(store, q, { retryDelayMs: 0 });
        await store.jobFailMany({
          items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "", retryDelayMs: 0, noRetry: false }],
          now: T0,
        });
        const [fresh] = await insert(store, q, [{ priority: 2 }]);
        const epoch = await lease(store, q);
        const claimed = await claimStarting(store, q, epoch, {}, T0 + 1);
        expect(claimed.map((j) => [j.id, j.state, j.attempt])).toEqual([
          [retried, "buffered", 1],
          [fresh, "buffered", 0],
        ]);
      });

      it("hands out no more body bytes than maxBytes, but always the first", async () => {
        const store = await open();
        const q = await createQueue(store);
        const ids = await insert(store, q, [
          { body: new Uint8Array(600) },
          { body: new Uint8Array(300) },
          { body: new Uint8Array(200) },
        ]);
        const epoch = await lease(store, q);
        const claimed = await claimStarting(store, q, epoch, { maxBytes: 500 });
        expect(claimed.map((j) => [j.id, j.state])).toEqual([
          [ids[0], "running"],
          [ids[1], "buffered"],
          [ids[2], "buffered"],
        ]);
      });

      it("claims and hands out nothing when nothing is due (a long poll's claim on an idle queue)", async () => {
        const store = await open();
        const q = await createQueue(store);
        const epoch = await lease(store, q);
        expect(await claimStarting(store, q, epoch)).toEqual([]);
        const [later] = await insert(store, q, [{ runAfter: T0 + 1000 }]);
        expect(await claimStarting(store, q, epoch)).toEqual([]);
        expect((await get(store, later!))!.state).toBe("pending");
      });

      it("claims and hands out nothing under an epoch that is not the lease's", async () => {
        const store = await open();
        const q = await createQueue(store);
        const [id] = await insert(store, q, [{}]);
        const epoch = await lease(store, q);
        expect(await claimStarting(store, q, epoch + 1)).toEqual([]);
        expect((await get(store, id!))!.state).toBe("pending");
      });
    });
  });
}
