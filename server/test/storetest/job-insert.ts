import { describe, expect, it } from "vitest";
import { RunlaterError } from "../../src/domain/errors.js";
import { createQueue, get, insert, newJob, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

export function exerciseJobInsert(open: OpenStore): void {
  describe("jobInsertMany", () => {
    it("returns ids in request order and stores pending jobs with every field", async () => {
      const store = await open();
      const q = await createQueue(store);
      const jobs = [newJob(q, { priority: 2, customStatus: "hello" }), newJob(q), newJob(q)];
      const ids = await store.jobInsertMany({ jobs, now: T0 });
      expect(ids).toEqual(jobs.map((j) => j.id));
      const job = await get(store, ids[0]!);
      expect(job).toMatchObject({
        queue: q,
        state: "pending",
        priority: 2,
        attemptsAllowed: 3,
        attemptsRemaining: 3,
        attempt: 0,
        customStatus: "hello",
        createdAt: T0,
        runAfter: T0,
      });
    });

    it("round-trips bodies byte for byte, including bytes that are not UTF-8", async () => {
      const store = await open();
      const q = await createQueue(store);
      const body = new Uint8Array([0, 0xff, 0xfe, 0x80, 0xc3, 0x28, 10, 13]);
      const [id] = await insert(store, q, [{ body }, { body: new Uint8Array() }]);
      expect(Array.from((await get(store, id!))!.body)).toEqual(Array.from(body));
    });

    it("rejects a batch naming an unknown queue and writes none of it", async () => {
      const store = await open();
      const q = await createQueue(store);
      const good = newJob(q);
      await expect(store.jobInsertMany({ jobs: [good, newJob("no_such_queue")], now: T0 })).rejects.toBeInstanceOf(
        RunlaterError,
      );
      expect(await get(store, good.id)).toBeUndefined();
    });

    it("dedupes by idempotency key while the first job is retained, also inside one batch", async () => {
      const store = await open();
      const q = await createQueue(store);
      const [first, dup] = await insert(store, q, [{ idempotencyKey: "k1" }, { idempotencyKey: "k1" }]);
      expect(dup).toBe(first);
      const [later] = await insert(store, q, [{ idempotencyKey: "k1" }]);
      expect(later).toBe(first);
      expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(1);
      await store.jobDeleteMany({ queue: q, filter: { state: "pending" }, limit: 10, now: T0 });
      const [fresh] = await insert(store, q, [{ idempotencyKey: "k1" }]);
      expect(fresh).not.toBe(first);
    });

    it("dedupes concurrent enqueues of one idempotency key to a single job", async () => {
      const store = await open();
      const q = await createQueue(store);
      const ids = await Promise.all(
        Array.from({ length: 8 }, () => insert(store, q, [{ idempotencyKey: "race" }, {}])),
      );
      expect(new Set(ids.map((pair) => pair[0])).size).toBe(1);
      expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(1 + ids.length);
    });

    it("keeps idempotency keys per queue", async () => {
      const store = await open();
      const a = await createQueue(store);
      const b = await createQueue(store);
      const [ida] = await insert(store, a, [{ idempotencyKey: "same" }]);
      const [idb] = await insert(store, b, [{ idempotencyKey: "same" }]);
      expect(ida).not.toBe(idb);
    });
  });
}
