import { describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { createQueue, get, handOut, insert, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseQueue(open: OpenStore): void {
  describe("queues", () => {
    it("creates a queue idempotently without changing the first config", async () => {
      const store = await open();
      const name = await createQueue(store, { priorities: 5 });
      const again = await store.queueCreate({ name, config: resolveQueueConfig({ priorities: 2 }), now: T0 });
      expect(again.created).toBe(false);
      expect(again.queue.config.priorities).toBe(5);
    });

    it("lists every created queue by name and gets unknown ones as undefined", async () => {
      const store = await open();
      const a = await createQueue(store);
      const b = await createQueue(store);
      const names = (await store.queueList()).map((q) => q.name);
      expect(names).toEqual(expect.arrayContaining([a, b]));
      expect([...names].sort()).toEqual(names);
      expect(await store.queueGet({ name: "no_such_queue" })).toBeUndefined();
    });

    it("updates a queue's config", async () => {
      const store = await open();
      const name = await createQueue(store);
      const current = (await store.queueGet({ name }))!;
      await store.queueUpdate({ name, config: { ...current.config, paused: true, maxDequeuePerSecond: 7 } });
      const after = (await store.queueGet({ name }))!;
      expect(after.config.paused).toBe(true);
      expect(after.config.maxDequeuePerSecond).toBe(7);
      expect(await store.queueUpdate({ name: "no_such_queue", config: current.config })).toBeUndefined();
    });

    it("grows a queue's partitions: the new ones take jobs, hand them out and count them", async () => {
      const store = await open();
      const name = await createQueue(store, { partitions: 2 });
      const current = (await store.queueGet({ name }))!;
      await store.queueUpdate({ name, config: { ...current.config, partitions: 4 } });
      expect((await store.queueGet({ name }))!.config.partitions).toBe(4);
      const ids = await insert(store, name, [{ partition: 0 }, { partition: 2 }, { partition: 3 }]);
      expect((await handOut(store, name, { partition: 3 })).map((j) => j.id)).toEqual([ids[2]]);
      expect((await store.jobPeekMany({ queue: name, limit: 10, now: T0 })).map((j) => j.id).sort()).toEqual(
        [ids[0], ids[1]].sort(),
      );
      expect(await store.jobCount({ queue: name, filter: { state: "pending" }, now: T0 })).toBe(2);
      expect((await store.queueStats({ name, now: T0 })).running).toBe(1);
      expect(await store.jobNextDueAt({ queue: name, partition: 2 })).toBe(T0);
      expect(await store.queueDelete({ name })).toBe(true);
      expect(await store.jobGetMany({ ids })).toEqual([undefined, undefined, undefined]);
    });

    it("deletes a queue with every job in every state, idempotently", async () => {
      const store = await open();
      const name = await createQueue(store);
      const [id] = await insert(store, name, [{}]);
      expect(await store.queueDelete({ name })).toBe(true);
      expect(await get(store, id!)).toBeUndefined();
      expect(await store.queueGet({ name })).toBeUndefined();
      expect(await store.queueDelete({ name })).toBe(false);
    });

    it("forgets a deleted queue's running claims: the expiry sweep skips them", async () => {
      const store = await open();
      const name = await createQueue(store);
      await insert(store, name, [{}]);
      const [running] = await handOut(store, name, { claimMs: 10 });
      await store.queueDelete({ name });
      const { expired } = await store.jobClaimExpire({ now: T0 + 1000, limit: 1000 });
      expect(expired.map((j) => j.id)).not.toContain(running!.id);
      expect(await get(store, running!.id)).toBeUndefined();
    });

    it("reports stats per state, with buffered jobs counted as pending", async () => {
      const store = await open();
      const name = await createQueue(store);
      await insert(store, name, [{ runAfter: T0 - 5000 }, { runAfter: T0 + 60_000 }, {}]);
      const stats = await store.queueStats({ name, now: T0 });
      expect(stats).toMatchObject({ pending: 3, scheduled: 1, running: 0, succeeded: 0, failed: 0 });
      expect(stats.oldestPendingAgeMs).toBe(5000);
    });
  });
}
