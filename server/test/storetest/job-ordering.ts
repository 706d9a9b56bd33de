/**
 * Ordering keys: of a partition's jobs that have not ended and share a key, only the
 * first enqueued (the head) is claimable; the others wait, shown as pending. Whatever
 * ends or deletes the head promotes the next, at its own run_after.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import type { JobRecord } from "../../src/domain/job-record.js";
import { FIFO_ORDERING_KEY } from "../../src/domain/ordering.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { Engine } from "../../src/engine/engine.js";
import type { Store } from "../../src/store/store.js";
import { createQueue, get, handOut, insert, lease, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

const ids = (jobs: JobRecord[]) => jobs.map((j) => j.id);

/** Claims (buffers) every due job of partition 0, changing nothing else. */
async function claim(store: Store, queue: string, now = T0): Promise<string[]> {
  const epoch = await lease(store, queue, 0, now);
  return ids(await store.jobClaimMany({ queue, partition: 0, epoch, limit: 100, now }));
}

async function complete(store: Store, jobs: JobRecord[], now = T0) {
  return store.jobCompleteMany({
    items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "" })),
    now,
  });
}

async function failForGood(store: Store, jobs: JobRecord[], now = T0) {
  return store.jobFailMany({
    items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "", noRetry: true })),
    now,
  });
}

async function states(store: Store, jobIds: string[]): Promise<string[]> {
  return (await store.jobGetMany({ ids: jobIds })).map((j) => j?.state ?? "absent");
}

export function exerciseJobOrdering(open: OpenStore): void {
  describe("ordering keys", () => {
    it("claims only the head of a key; the rest wait, in one batch or across batches", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b] = await insert(store, q, [{ orderingKey: "k" }, { orderingKey: "k" }]);
      const [c] = await insert(store, q, [{ orderingKey: "k" }]);
      expect(await states(store, [a!, b!, c!])).toEqual(["pending", "waiting", "waiting"]);
      expect((await get(store, b!))!.orderingKey).toBe("k");
      expect(await claim(store, q)).toEqual([a]);
      expect(await claim(store, q)).toEqual([]);
    });

    it("runs the next job only after the head succeeds, and reports its due time", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b, c] = await insert(store, q, [
        { orderingKey: "k" },
        { orderingKey: "k", runAfter: T0 + 5 },
        { orderingKey: "k" },
      ]);
      const [head] = await handOut(store, q);
      expect(head!.id).toBe(a);
      const [r] = await complete(store, [head!], T0 + 10);
      expect(r).toEqual({ outcome: "acknowledged", promotedAt: T0 + 5 });
      expect(await states(store, [a!, b!, c!])).toEqual(["succeeded", "pending", "waiting"]);
      expect((await get(store, b!))!.updatedAt).toBe(T0 + 10);
      expect(ids(await handOut(store, q, { now: T0 + 10 }))).toEqual([b]);
    });

    it("runs the next job after the head fails for good, and keeps the head when it will retry", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b] = await insert(store, q, [{ orderingKey: "k", attemptsAllowed: 2 }, { orderingKey: "k" }]);
      let [head] = await handOut(store, q, { retryDelayMs: 100 });
      const [retry] = await store.jobFailMany({
        items: [{ id: head!.id, claimToken: head!.claimToken, customStatus: "", noRetry: false }],
        now: T0,
      });
      expect(retry).toEqual({ outcome: "acknowledged", pendingAt: T0 + 100 });
      expect(await states(store, [a!, b!])).toEqual(["pending", "waiting"]);
      expect(await handOut(store, q, { now: T0 + 99 })).toEqual([]);
      [head] = await handOut(store, q, { now: T0 + 100 });
      expect(head!.id).toBe(a); // the retry keeps its place: b still waits
      const [last] = await store.jobFailMany({
        items: [{ id: head!.id, claimToken: head!.claimToken, customStatus: "", noRetry: false }],
        now: T0 + 200,
      });
      expect(last).toEqual({ outcome: "acknowledged", promotedAt: T0 });
      expect(await states(store, [a!, b!])).toEqual(["failed", "pending"]);
      expect(ids(await handOut(store, q, { now: T0 + 200 }))).toEqual([b]);
    });

    it("keeps the head when its claim expires with attempts left; promotes the next when it fails for good", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b] = await insert(store, q, [{ orderingKey: "k", attemptsAllowed: 2 }, { orderingKey: "k" }]);
      await handOut(store, q, { claimMs: 100, retryDelayMs: 0 });
      const first = await store.jobClaimExpire({ now: T0 + 100, limit: 100 });
      expect(ids(first.expired.filter((j) => j.queue === q))).toEqual([a]);
      expect(await states(store, [a!, b!])).toEqual(["pending", "waiting"]);
      expect(ids(await handOut(store, q, { now: T0 + 100, claimMs: 100 }))).toEqual([a]);
      const second = await store.jobClaimExpire({ now: T0 + 200, limit: 100 });
      expect(second.expired.find((j) => j.id === a)).toMatchObject({ state: "failed", orderingKey: "k" });
      expect(await states(store, [a!, b!])).toEqual(["failed", "pending"]);
      expect(ids(await handOut(store, q, { now: T0 + 200 }))).toEqual([b]);
    });

    it("keeps the head when it is released from a buffer or checkpointed back to pending", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b] = await insert(store, q, [{ orderingKey: "k" }, { orderingKey: "k" }]);
      const epoch = await lease(store, q);
      await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 });
      await store.jobReleaseBuffered({ queue: q, partition: 0, epoch, ids: [a!] });
      expect(await states(store, [a!, b!])).toEqual(["pending", "waiting"]);
      const [head] = await handOut(store, q);
      const checkpoint = {
        claimExpiresAt: 0,
        moveToPending: true,
        runAfter: T0 + 50,
        attemptsAllowed: 0,
        customStatus: "",
      };
      const [r] = await store.jobCheckpointMany({
        items: [{ id: head!.id, claimToken: head!.claimToken, ...checkpoint }],
        now: T0,
      });
      expect(r).toEqual({ outcome: "acknowledged", pendingAt: T0 + 50 });
      expect(await states(store, [a!, b!])).toEqual(["pending", "waiting"]);
      expect(ids(await handOut(store, q, { now: T0 + 50 }))).toEqual([a]);
    });

    it("promotes the next job when the head is deleted, and skips deleted waiting jobs", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b, c, d] = await insert(store, q, [
        { orderingKey: "k" },
        { orderingKey: "k", priority: 2 },
        { orderingKey: "k" },
        { orderingKey: "k" },
      ]);
      // b waits behind a; delete it first (only it has priority 2), then the running head.
      expect(
        await store.jobDeleteMany({ queue: q, filter: { state: "pending", priority: 2 }, limit: 10, now: T0 }),
      ).toBe(1);
      await handOut(store, q);
      expect(await store.jobDeleteMany({ queue: q, filter: { state: "running" }, limit: 10, now: T0 })).toBe(1);
      expect(await states(store, [a!, b!, c!, d!])).toEqual(["absent", "absent", "pending", "waiting"]);
      expect(await claim(store, q)).toEqual([c]);
    });

    it("runs different keys in parallel, and jobs without a key as before, by priority and run_after", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [x1, y1, x2, free2, y2, free1, later] = await insert(store, q, [
        { orderingKey: "x", priority: 2 },
        { orderingKey: "y" },
        { orderingKey: "x" },
        { priority: 2, runAfter: T0 - 10 },
        { orderingKey: "y" },
        { priority: 1, runAfter: T0 - 5 },
        { runAfter: T0 + 1000 },
      ]);
      expect(await claim(store, q)).toEqual([free1, y1, free2, x1]);
      expect(await states(store, [x2!, y2!, later!])).toEqual(["waiting", "waiting", "pending"]);
      expect(await claim(store, q, T0 + 1000)).toEqual([later]);
    });

    it("does not let priority reorder a key: the head is the job enqueued first", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [low, high] = await insert(store, q, [
        { orderingKey: "k", priority: 3 },
        { orderingKey: "k", priority: 1 },
      ]);
      const [head] = await handOut(store, q);
      expect(head!.id).toBe(low);
      await complete(store, [head!]);
      expect(ids(await handOut(store, q))).toEqual([high]);
    });

    it("counts waiting jobs as pending, but peek, claim and the next due time never see them", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b, c] = await insert(store, q, [
        { orderingKey: "k" },
        { orderingKey: "k", runAfter: T0 - 100 },
        { orderingKey: "k", runAfter: T0 + 500 },
      ]);
      expect(ids(await store.jobPeekMany({ queue: q, limit: 10, now: T0 }))).toEqual([a]);
      await handOut(store, q);
      expect(await store.jobPeekMany({ queue: q, limit: 10, now: T0 })).toEqual([]);
      expect(await store.jobNextDueAt({ queue: q, partition: 0 })).toBeUndefined();
      expect(await store.queueStats({ name: q, now: T0 })).toMatchObject({
        pending: 2,
        scheduled: 1,
        running: 1,
        oldestPendingAgeMs: 100,
      });
      expect(await store.jobCount({ queue: q, filter: { state: "pending" }, now: T0 })).toBe(2);
      expect(await store.jobCount({ queue: q, filter: { state: "pending", future: true }, now: T0 })).toBe(1);
      expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(3);
      const scanned = await store.jobScan({ queue: q, filter: { state: "pending" }, limit: 10, now: T0 });
      expect(ids(scanned).sort()).toEqual([b, c].sort());
    });

    it("respects the promoted job's own run_after", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [, b] = await insert(store, q, [{ orderingKey: "k" }, { orderingKey: "k", runAfter: T0 + 5000 }]);
      const [head] = await handOut(store, q);
      const [r] = await complete(store, [head!]);
      expect(r!.promotedAt).toBe(T0 + 5000);
      expect(await claim(store, q)).toEqual([]);
      expect(await store.jobNextDueAt({ queue: q, partition: 0 })).toBe(T0 + 5000);
      expect(await claim(store, q, T0 + 5000)).toEqual([b]);
    });

    it("puts a retried failed job at the tail of its key, or makes it the head when the key is idle", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, b, c] = await insert(store, q, [{ orderingKey: "k" }, { orderingKey: "k" }, { orderingKey: "k" }]);
      await failForGood(store, await handOut(store, q)); // a failed, b promoted
      expect(await store.jobRetryFailed({ queue: q, attemptsAllowed: 2, runAfter: T0, limit: 10, now: T0 })).toBe(1);
      expect(await states(store, [a!, b!, c!])).toEqual(["waiting", "pending", "waiting"]);
      for (const next of [b, c, a]) {
        const running = await handOut(store, q);
        expect(ids(running)).toEqual([next]);
        await complete(store, running);
      }
      // An idle key: the retried job is its head at once.
      await insert(store, q, [{ orderingKey: "idle" }]);
      const [d] = await handOut(store, q);
      await failForGood(store, [d!]);
      await store.jobRetryFailed({ queue: q, attemptsAllowed: 1, runAfter: T0, limit: 10, now: T0 });
      expect(await states(store, [d!.id])).toEqual(["pending"]);
      expect(ids(await handOut(store, q))).toEqual([d!.id]);
    });

    it("keeps an idempotent repeat out of the sequence, and keys of finished jobs out of the way", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [a, again] = await insert(store, q, [
        { orderingKey: "k", idempotencyKey: "once" },
        { orderingKey: "k", idempotencyKey: "once" },
      ]);
      expect(again).toBe(a);
      const [head] = await handOut(store, q);
      await complete(store, [head!]);
      expect(
        await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 1, failedBefore: T0 + 1, limit: 10 }),
      ).toBe(1);
      const [b] = await insert(store, q, [{ orderingKey: "k" }]);
      expect(await claim(store, q)).toEqual([b]);
    });

    it("starts a queue created again under the same name with fresh sequences", async () => {
      const store = await open();
      const q = await createQueue(store);
      await insert(store, q, [{ orderingKey: "k" }, { orderingKey: "k" }]);
      await handOut(store, q);
      expect(await store.queueDelete({ name: q })).toBe(true);
      await store.queueCreate({ name: q, config: resolveQueueConfig({}), now: T0 });
      const [fresh] = await insert(store, q, [{ orderingKey: "k" }]);
      expect(await states(store, [fresh!])).toEqual(["pending"]);
      expect(await claim(store, q)).toEqual([fresh]);
    });

    it("keeps keys apart per partition and stores any text, including FIFO's reserved key", async () => {
      const store = await open();
      const q = await createQueue(store, { partitions: 2 });
      const odd = "ключ 🔑 {tag} :o: \\ %s";
      const [p0, p1, fifo, fifo2, plain, padded] = await insert(store, q, [
        { orderingKey: odd },
        { orderingKey: odd, partition: 1 },
        { orderingKey: FIFO_ORDERING_KEY },
        { orderingKey: FIFO_ORDERING_KEY },
        { orderingKey: "k" },
        { orderingKey: "k " }, // a different key: no collation may pad or fold keys
      ]);
      expect(await states(store, [p0!, p1!, fifo!, fifo2!, plain!, padded!])).toEqual([
        "pending",
        "pending",
        "pending",
        "waiting",
        "pending",
        "pending",
      ]);
      expect((await get(store, padded!))!.orderingKey).toBe("k ");
      expect((await get(store, p1!))!.orderingKey).toBe(odd);
      expect((await get(store, fifo!))!.orderingKey).toBe(FIFO_ORDERING_KEY);
    });

    it("runs a FIFO queue enqueued through the engine as one sequence: enqueue order, whatever the priorities and keys", async () => {
      const store = await open();
      const q = await createQueue(store, { fifo: true, priorities: 3 });
      const engine = engineOver(store);
      const specs = [3, 1, 2, 1, 3].map((priority, i) => ({
        queue: q,
        body: new Uint8Array([i]),
        priority,
        attemptsAllowed: 0,
        idempotencyKey: "",
        customStatus: "",
        orderingKey: i % 2 === 0 ? "" : `user-key-${i}`,
      }));
      const enqueued = await engine.enqueue(specs.slice(0, 3));
      enqueued.push(...(await engine.enqueue(specs.slice(3))));
      const stored = (await store.jobGetMany({ ids: enqueued })).map((j) => j!);
      expect(stored.map((j) => [j.orderingKey, j.priority])).toEqual(
        [3, 1, 2, 1, 3].map((p) => [FIFO_ORDERING_KEY, p]),
      );
      for (const id of enqueued) {
        const running = await handOut(store, q);
        expect(ids(running)).toEqual([id]);
        await complete(store, running);
      }
      expect(await handOut(store, q)).toEqual([]);
    });
  });
}

/** An engine over `store` whose broker side does nothing: jobs are claimed here by hand. */
function engineOver(store: Store): Engine {
  const idle = { dequeue: async () => [], notify() {}, onQueueUpdated() {}, onQueueDeleted() {} };
  return new Engine({
    store,
    broker: idle as unknown as ConstructorParameters<typeof Engine>[0]["broker"],
    clock: new ManualClock(T0),
  });
}
