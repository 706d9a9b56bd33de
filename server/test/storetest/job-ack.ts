import { describe, expect, it } from "vitest";
import { createQueue, get, handOut, insert, lease, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseJobAck(open: OpenStore): void {
  describe("jobCompleteMany / jobFailMany", () => {
    it("a success ack with the current token finishes the job and appends the custom status", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ customStatus: "queued by cron" }]);
      const [job] = await handOut(store, q);
      const [r] = await store.jobCompleteMany({
        items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "sent" }],
        now: T0 + 10,
      });
      expect(r!.outcome).toBe("acknowledged");
      expect(await get(store, job!.id)).toMatchObject({
        state: "succeeded",
        finishedAt: T0 + 10,
        customStatus: "queued by cron\nsent",
      });
    });

    it("takes empty batches: nothing to do, nothing returned", async () => {
      const store = await open();
      const q = await createQueue(store);
      const epoch = await lease(store, q);
      expect(await store.jobCompleteMany({ items: [], now: T0 })).toEqual([]);
      expect(await store.jobFailMany({ items: [], now: T0 })).toEqual([]);
      expect(await store.jobCheckpointMany({ items: [], now: T0 })).toEqual([]);
      expect(await store.jobGetMany({ ids: [] })).toEqual([]);
      expect(await store.jobInsertMany({ jobs: [], now: T0 })).toEqual([]);
      expect(await store.jobStartMany({ queue: q, partition: 0, epoch, plans: [], now: T0 })).toEqual([]);
    });

    it("refuses a stale token, a repeated ack and an unknown id, each for its own job only", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}, {}]);
      const [a, b] = await handOut(store, q);
      const results = await store.jobCompleteMany({
        items: [
          { id: a!.id, claimToken: "wrong", customStatus: "" },
          // Two real ids in one string, with a's own token: names no job (a store that
          // sends ids joined by spaces must not read it as two).
          { id: `${a!.id} ${b!.id}`, claimToken: a!.claimToken, customStatus: "" },
          { id: "", claimToken: a!.claimToken, customStatus: "" },
          { id: b!.id, claimToken: b!.claimToken, customStatus: "" },
          { id: `${q}.0.zzzzzzzzzzzz`, claimToken: "x", customStatus: "" },
          { id: "not a job id", claimToken: "x", customStatus: "" },
          { id: `${q}.x.${a!.id}`, claimToken: a!.claimToken, customStatus: "" },
        ],
        now: T0,
      });
      expect(results.map((r) => r.outcome)).toEqual([
        "stale_claim",
        "not_found",
        "not_found",
        "acknowledged",
        "not_found",
        "not_found",
        "not_found",
      ]);
      expect(await store.jobGetMany({ ids: ["not a job id", `${q}.x.${a!.id}`, a!.id] })).toMatchObject([
        undefined,
        undefined,
        { id: a!.id },
      ]);
      expect((await get(store, a!.id))!.state).toBe("running");
      const again = await store.jobCompleteMany({
        items: [{ id: b!.id, claimToken: b!.claimToken, customStatus: "twice" }],
        now: T0 + 5,
      });
      expect(again[0]!.outcome).toBe("stale_claim");
      expect(await get(store, b!.id)).toMatchObject({ state: "succeeded", finishedAt: T0, customStatus: "" });
    });

    it("acks of one claim token: a stale or finished one is refused alone, the others are acknowledged", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}, {}, {}, {}]);
      const epoch = await lease(store, q);
      const claimed = await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 });
      const plans = claimed.map((j) => ({ id: j.id, claimToken: "batch", claimExpiresAt: T0 + 1000, retryDelayMs: 0 }));
      const ids = await store.jobStartMany({ queue: q, partition: 0, epoch, plans, now: T0 });
      const [a, b, c, d] = ids;
      expect(
        (await store.jobCompleteMany({ items: [{ id: a!, claimToken: "batch", customStatus: "" }], now: T0 + 1 }))[0]!
          .outcome,
      ).toBe("acknowledged");
      const results = await store.jobCompleteMany({
        items: [b, a, c, d].map((id) => ({ id: id!, claimToken: id === c ? "other" : "batch", customStatus: "" })),
        now: T0 + 2,
      });
      expect(results.map((r) => r.outcome)).toEqual(["acknowledged", "stale_claim", "stale_claim", "acknowledged"]);
      expect(await get(store, a!)).toMatchObject({ state: "succeeded", finishedAt: T0 + 1 });
      expect(await get(store, b!)).toMatchObject({
        state: "succeeded",
        finishedAt: T0 + 2,
        claimExpiresAt: 0,
        updatedAt: T0 + 2,
      });
      expect((await get(store, c!))!.state).toBe("running");
      expect(await get(store, d!)).toMatchObject({ state: "succeeded", finishedAt: T0 + 2 });
      // All of one token, all running: every one acknowledged.
      expect(
        (await store.jobCompleteMany({ items: [{ id: c!, claimToken: "batch", customStatus: "" }], now: T0 + 3 }))[0]!
          .outcome,
      ).toBe("acknowledged");
    });

    it("applies a job named twice in one batch once: the second sees the first's change", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const [job] = await handOut(store, q);
      const item = { id: job!.id, claimToken: job!.claimToken, customStatus: "once" };
      const results = await store.jobCompleteMany({ items: [item, item], now: T0 });
      expect(results.map((r) => r.outcome)).toEqual(["acknowledged", "stale_claim"]);
      expect((await get(store, job!.id))!.customStatus).toBe("once");
    });

    it("a failure with attempts left goes back to pending after the worker's delay", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ attemptsAllowed: 3 }]);
      const [job] = await handOut(store, q, { retryDelayMs: 1000 });
      const [r] = await store.jobFailMany({
        items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "boom", retryDelayMs: 250, noRetry: false }],
        now: T0 + 10,
      });
      expect(r).toEqual({ outcome: "acknowledged", pendingAt: T0 + 260 });
      expect(await get(store, job!.id)).toMatchObject({
        state: "pending",
        runAfter: T0 + 260,
        attemptsRemaining: 2,
        customStatus: "boom",
      });
      expect(await handOut(store, q, { now: T0 + 259 })).toEqual([]);
      const [again] = await handOut(store, q, { now: T0 + 260 });
      expect(again).toMatchObject({ id: job!.id, attempt: 2, attemptsRemaining: 1 });
    });

    it("a failure without a delay uses the delay planned at hand-out", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const [job] = await handOut(store, q, { retryDelayMs: 4000 });
      await store.jobFailMany({
        items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "", noRetry: false }],
        now: T0,
      });
      expect((await get(store, job!.id))!.runAfter).toBe(T0 + 4000);
    });

    it("the last attempt's failure, or a no-retry failure, ends in failed", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [last, noRetry] = await insert(store, q, [{ attemptsAllowed: 1 }, { attemptsAllowed: 5 }]);
      const jobs = await handOut(store, q);
      const results = await store.jobFailMany({
        items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "", noRetry: j.id === noRetry })),
        now: T0 + 3,
      });
      expect(results.every((r) => r.outcome === "acknowledged" && r.pendingAt === undefined)).toBe(true);
      expect(await get(store, last!)).toMatchObject({ state: "failed", attemptsRemaining: 0, finishedAt: T0 + 3 });
      expect(await get(store, noRetry!)).toMatchObject({ state: "failed", attemptsRemaining: 4 });
    });

    it("a failure ack for a job that is not running changes nothing", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [id] = await insert(store, q, [{}]);
      const [r] = await store.jobFailMany({
        items: [{ id: id!, claimToken: "", customStatus: "", noRetry: false }],
        now: T0,
      });
      expect(r!.outcome).toBe("stale_claim");
      expect(await get(store, id!)).toMatchObject({ state: "pending", attemptsRemaining: 3 });
    });

    it("counts the limit in characters, an emoji being one, and cuts whole characters", async () => {
      const store = await open();
      const q = await createQueue(store);
      const full = `😀${"a".repeat(999)}`; // 1000 characters, 1001 UTF-16 units
      await insert(store, q, [{ customStatus: full }]);
      expect(
        (
          await store.jobGetMany({
            ids: (await store.jobScan({ queue: q, filter: {}, limit: 1, now: T0 })).map((j) => j.id),
          })
        )[0]!.customStatus,
      ).toBe(full);
      const [job] = await handOut(store, q);
      await store.jobCompleteMany({
        items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "b" }],
        now: T0,
      });
      // 1002 characters: the two oldest go, the emoji whole.
      expect((await get(store, job!.id))!.customStatus).toBe(`${"a".repeat(998)}\nb`);
    });

    it("cuts the custom status to its newest 1000 characters", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ customStatus: "a".repeat(900) }]);
      const [job] = await handOut(store, q);
      await store.jobCompleteMany({
        items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "b".repeat(300) }],
        now: T0,
      });
      const status = (await get(store, job!.id))!.customStatus;
      expect(status).toHaveLength(1000);
      expect(status.endsWith("b".repeat(300))).toBe(true);
    });

    it("counts the custom status limit in characters, not bytes, for multi-byte text", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ customStatus: "é".repeat(700) }]);
      const [job] = await handOut(store, q);
      await store.jobCompleteMany({
        items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "日本".repeat(200) }],
        now: T0,
      });
      const status = (await get(store, job!.id))!.customStatus;
      expect(status).toBe(`${"é".repeat(599)}\n${"日本".repeat(200)}`);
    });
  });
}
