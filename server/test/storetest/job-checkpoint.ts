import { describe, expect, it } from "vitest";
import type { CheckpointInput } from "../../src/domain/transitions.js";
import { createQueue, get, handOut, insert, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

const base: CheckpointInput = {
  claimExpiresAt: 0,
  moveToPending: false,
  runAfter: 0,
  attemptsAllowed: 0,
  customStatus: "",
};

export function exerciseJobCheckpoint(open: OpenStore): void {
  describe("jobCheckpointMany", () => {
    it("extends the claim so the job outlives its first expiry, and runs out at the new one", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const [job] = await handOut(store, q, { claimMs: 1000 });
      const [r] = await store.jobCheckpointMany({
        items: [{ ...base, id: job!.id, claimToken: job!.claimToken, claimExpiresAt: T0 + 5000 }],
        now: T0 + 900,
      });
      expect(r!.outcome).toBe("acknowledged");
      const { expired } = await store.jobClaimExpire({ now: T0 + 1500, limit: 100 });
      expect(expired.map((j) => j.id)).not.toContain(job!.id);
      expect(await get(store, job!.id)).toMatchObject({ state: "running", claimExpiresAt: T0 + 5000 });
      const later = await store.jobClaimExpire({ now: T0 + 5000, limit: 100 });
      expect(later.expired.map((j) => j.id)).toContain(job!.id);
    });

    it("replaces the body and appends the status", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const [job] = await handOut(store, q);
      await store.jobCheckpointMany({
        items: [
          {
            ...base,
            id: job!.id,
            claimToken: job!.claimToken,
            claimExpiresAt: T0 + 100,
            newBody: new Uint8Array([9, 9]),
            customStatus: "step 2",
          },
        ],
        now: T0,
      });
      const after = (await get(store, job!.id))!;
      expect(Array.from(after.body)).toEqual([9, 9]);
      expect(after.customStatus).toBe("step 2");
    });

    it("replaces the body byte for byte, including bytes that are not UTF-8", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const [job] = await handOut(store, q);
      const body = new Uint8Array([0xff, 0, 0xc3, 0x28, 0xed, 0xa0, 0x80]);
      await store.jobCheckpointMany({
        items: [{ ...base, id: job!.id, claimToken: job!.claimToken, claimExpiresAt: T0 + 100, newBody: body }],
        now: T0,
      });
      expect(Array.from((await get(store, job!.id))!.body)).toEqual(Array.from(body));
    });

    it("moves the job back to pending at run_after without using up an attempt", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ attemptsAllowed: 2 }]);
      const [job] = await handOut(store, q);
      const [r] = await store.jobCheckpointMany({
        items: [{ ...base, id: job!.id, claimToken: job!.claimToken, moveToPending: true, runAfter: T0 + 60_000 }],
        now: T0,
      });
      expect(r).toEqual({ outcome: "acknowledged", pendingAt: T0 + 60_000 });
      expect(await get(store, job!.id)).toMatchObject({
        state: "pending",
        runAfter: T0 + 60_000,
        attemptsRemaining: 2,
        attemptsAllowed: 2,
      });
      const [again] = await handOut(store, q, { now: T0 + 60_000 });
      expect(again).toMatchObject({ attempt: 1, attemptsRemaining: 1 });
    });

    it("resets attempts: the running attempt counts as the first of the new allowance", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ attemptsAllowed: 1 }]);
      const [job] = await handOut(store, q);
      await store.jobCheckpointMany({
        items: [{ ...base, id: job!.id, claimToken: job!.claimToken, claimExpiresAt: T0 + 100, attemptsAllowed: 5 }],
        now: T0,
      });
      expect(await get(store, job!.id)).toMatchObject({ attemptsAllowed: 5, attemptsRemaining: 4 });
      await store.jobFailMany({
        items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "", noRetry: false, retryDelayMs: 0 }],
        now: T0,
      });
      expect((await get(store, job!.id))!.state).toBe("pending");
    });

    it("refuses a checkpoint with a stale claim token", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{}]);
      const [job] = await handOut(store, q);
      const [r] = await store.jobCheckpointMany({
        items: [{ ...base, id: job!.id, claimToken: "old", moveToPending: true, runAfter: T0 }],
        now: T0,
      });
      expect(r!.outcome).toBe("stale_claim");
      expect((await get(store, job!.id))!.state).toBe("running");
    });
  });
}
