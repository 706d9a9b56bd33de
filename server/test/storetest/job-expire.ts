import { describe, expect, it } from "vitest";
import { createQueue, get, handOut, insert, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseJobExpire(open: OpenStore): void {
  describe("jobClaimExpire", () => {
    it("returns an expired claim's job to pending after the planned delay, charging the attempt", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ attemptsAllowed: 3 }]);
      const [job] = await handOut(store, q, { claimMs: 1000, retryDelayMs: 500 });
      expect((await store.jobClaimExpire({ now: T0 + 999, limit: 100 })).expired.filter((j) => j.queue === q)).toEqual(
        [],
      );
      const { expired } = await store.jobClaimExpire({ now: T0 + 1000, limit: 100 });
      expect(expired.filter((j) => j.queue === q).map((j) => j.id)).toEqual([job!.id]);
      expect(await get(store, job!.id)).toMatchObject({ state: "pending", runAfter: T0 + 1500, attemptsRemaining: 2 });
    });

    it("fails a job whose last attempt timed out", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ attemptsAllowed: 1 }]);
      const [job] = await handOut(store, q, { claimMs: 10 });
      await store.jobClaimExpire({ now: T0 + 10, limit: 100 });
      expect(await get(store, job!.id)).toMatchObject({ state: "failed", attemptsRemaining: 0, finishedAt: T0 + 10 });
    });

    it("refuses the late ack of a worker whose claim expired and was handed out again", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const [first] = await handOut(store, q, { claimMs: 10, retryDelayMs: 0 });
      await store.jobClaimExpire({ now: T0 + 10, limit: 100 });
      const [second] = await handOut(store, q, { now: T0 + 10 });
      expect(second!.claimToken).not.toBe(first!.claimToken);
      const [late] = await store.jobCompleteMany({
        items: [{ id: first!.id, claimToken: first!.claimToken, customStatus: "late" }],
        now: T0 + 11,
      });
      expect(late!.outcome).toBe("stale_claim");
      expect(await get(store, first!.id)).toMatchObject({
        state: "running",
        claimToken: second!.claimToken,
        attempt: 2,
      });
    });

    it("expires at most `limit` claims per call and reports the next expiry", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}, {}, {}]);
      await handOut(store, q, { claimMs: 10 });
      const ours = (r: { expired: Array<{ queue: string }> }) => r.expired.filter((j) => j.queue === q).length;
      let total = 0;
      for (let i = 0; i < 10 && total < 3; i++) {
        const r = await store.jobClaimExpire({ now: T0 + 10, limit: 1 });
        expect(r.expired.length).toBeLessThanOrEqual(1);
        total += ours(r);
      }
      expect(total).toBe(3);
    });
  });
}
