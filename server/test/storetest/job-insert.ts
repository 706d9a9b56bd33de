import { describe, expect, it } from "vitest";
import { RunlaterError } from "../../src/domain/errors.js";
import type { JobRecord } from "../../src/domain/job-record.js";
import { createQueue, get, handOut, insert, newJob, T0 } from "./fixtures.js";
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

    it("keeps a job's traceparent through lookups, hand-out and rewrites, beside a workflow context", async () => {
      const store = await open();
      const q = await createQueue(store);
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      const context = '{"workflow":"wf","instance":"i-1"}';
      const [traced, plain, both] = await insert(store, q, [
        { traceparent },
        {},
        { traceparent, workflow: context, customStatus: "s".repeat(1000) }, // (past Redis's first read)
      ]);
      const expected = (id: string | undefined) =>
        id === plain
          ? { traceparent: undefined, workflow: undefined }
          : id === both
            ? { traceparent, workflow: context }
            : { traceparent, workflow: undefined };
      const pick = (j: JobRecord | undefined) => ({ traceparent: j!.traceparent, workflow: j!.workflow });
      for (const bodies of [true, false]) {
        const found = await store.jobGetMany({ ids: [traced!, plain!, both!], bodies });
        expect(found.map(pick)).toEqual([traced, plain, both].map(expected));
      }
      const scanned = await store.jobScan({ queue: q, filter: {}, limit: 10, now: T0 });
      expect(scanned.map(pick)).toEqual(scanned.map((j) => expected(j.id)));
      // The records a worker is handed come from the claim: they carry it too.
      const running = await handOut(store, q);
      expect(running.map(pick)).toEqual(running.map((j) => expected(j.id)));
      // A checkpoint that grows the job's attributes rewrites the whole record.
      const results = await store.jobCheckpointMany({
        items: running.map((j) => ({
          id: j.id,
          claimToken: j.claimToken,
          claimExpiresAt: T0 + 60_000,
          moveToPending: false,
          runAfter: 0,
          attemptsAllowed: 0,
          customStatus: "progress ".repeat(20),
        })),
        now: T0 + 1,
      });
      expect(results.map((r) => r.outcome)).toEqual(running.map(() => "acknowledged"));
      const acked = await store.jobCompleteMany({
        items: [{ id: traced!, claimToken: running.find((j) => j.id === traced)!.claimToken, customStatus: "" }],
        now: T0 + 2,
      });
      expect(acked[0]!.outcome).toBe("acknowledged");
      const after = await store.jobGetMany({ ids: [traced!, plain!, both!] });
      expect(after.map((j) => j!.state)).toEqual(["succeeded", "running", "running"]);
      expect(after.map(pick)).toEqual([traced, plain, both].map(expected));
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
