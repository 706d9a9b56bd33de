import { describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { createQueue, get, insert, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseLease(open: OpenStore): void {
  describe("leases and fencing", () => {
    it("grants a partition to one owner at a time and renews it for that owner", async () => {
      const store = await open();
      const q = await createQueue(store);
      const a = await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 });
      expect(a).toBeDefined();
      expect(
        await store.leaseAcquire({ queue: q, partition: 0, owner: "b", ttlMs: 1000, now: T0 + 500 }),
      ).toBeUndefined();
      const renewed = await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 + 900 });
      expect(renewed).toMatchObject({ epoch: a!.epoch, expiresAt: T0 + 1900 });
    });

    it("gives an expired lease to a new owner with a higher epoch", async () => {
      const store = await open();
      const q = await createQueue(store);
      const a = (await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 }))!;
      const b = (await store.leaseAcquire({ queue: q, partition: 0, owner: "b", ttlMs: 1000, now: T0 + 1001 }))!;
      expect(b.epoch).toBeGreaterThan(a.epoch);
      await store.leaseRelease({ queue: q, partition: 0, owner: "b", epoch: b.epoch });
      const c = (await store.leaseAcquire({ queue: q, partition: 0, owner: "c", ttlMs: 1000, now: T0 + 1002 }))!;
      expect(c.epoch).toBeGreaterThan(b.epoch);
    });

    it("keeps epochs growing when a queue is deleted and created again", async () => {
      const store = await open();
      const q = await createQueue(store);
      const first = (await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 }))!;
      await store.queueDelete({ name: q });
      await store.queueCreate({ name: q, config: resolveQueueConfig({}), now: T0 });
      const second = (await store.leaseAcquire({ queue: q, partition: 0, owner: "b", ttlMs: 1000, now: T0 }))!;
      // An owner of the old queue still holding epoch `first` must not pass the new fence.
      expect(second.epoch).toBeGreaterThan(first.epoch);
    });

    it("fences the old owner: its buffered jobs cannot be started, and the new owner returns them to pending", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [id] = await insert(store, q, [{}]);
      const a = (await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 }))!;
      await store.jobClaimMany({ queue: q, partition: 0, epoch: a.epoch, limit: 10, now: T0 });
      const b = (await store.leaseAcquire({ queue: q, partition: 0, owner: "b", ttlMs: 1000, now: T0 + 2000 }))!;
      const plan = { id: id!, claimToken: "late", claimExpiresAt: T0 + 9000, retryDelayMs: 0 };
      expect(
        await store.jobStartMany({ queue: q, partition: 0, epoch: a.epoch, plans: [plan], now: T0 + 2000 }),
      ).toEqual([]);
      expect(await store.jobReleaseBuffered({ queue: q, partition: 0, belowEpoch: b.epoch })).toBe(1);
      expect(await get(store, id!)).toMatchObject({ state: "pending", attemptsRemaining: 3 });
      const claimed = await store.jobClaimMany({ queue: q, partition: 0, epoch: b.epoch, limit: 10, now: T0 + 2000 });
      expect(claimed.map((j) => j.id)).toEqual([id]);
    });
  });
}
