import pino from "pino";
import { describe, expect, it } from "vitest";
import { RunlaterError } from "../../src/domain/errors.js";
import type { JobRecord } from "../../src/domain/job-record.js";
import { defaultRetryPolicy, retryDelayMs } from "../../src/domain/retry-policy.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { QueueRecord } from "../../src/store/store.js";
import { setup } from "./harness.js";

describe("acks", () => {
  it("reports acknowledged, stale claim and not found per job without failing the batch", async () => {
    const t = await setup();
    await t.enqueue({}, {});
    const [a, b] = await t.dequeue();
    const results = await t.engine.ack({
      queue: t.queue,
      succeeded: [
        { jobId: a!.id, claimToken: a!.claimToken, customStatus: "" },
        { jobId: b!.id, claimToken: "not-the-token", customStatus: "" },
        { jobId: "garbage", claimToken: "x", customStatus: "" },
        { jobId: "other_queue.0.abcdefghijkl", claimToken: "x", customStatus: "" },
      ],
      failed: [],
    });
    expect(results.map((r) => r.outcome)).toEqual(["acknowledged", "stale_claim", "not_found", "not_found"]);
    expect((await t.ok(a!))[0]!.outcome).toBe("stale_claim"); // double ack
  });

  it("retries a failed job after the worker's delay, then fails it when attempts run out", async () => {
    const t = await setup();
    const [id] = await t.enqueue({ attemptsAllowed: 2 });
    const [first] = await t.dequeue();
    expect(first).toMatchObject({ attempt: 1, attemptsAllowed: 2 });
    await t.fail(first!, 1000);
    expect(await t.job(id!)).toMatchObject({ state: "pending", attemptsRemaining: 1 });
    await t.clock.advance(1000);
    const [second] = await t.dequeue();
    expect(second).toMatchObject({ id, attempt: 2 });
    await t.fail(second!, 1000);
    expect(await t.job(id!)).toMatchObject({ state: "failed", attemptsRemaining: 0 });
  });

  it("without a worker delay uses the queue's retry policy: 5 linear steps then exponential", async () => {
    const delays = Array.from({ length: 10 }, (_, i) => retryDelayMs(defaultRetryPolicy, i + 1) / 1000);
    expect(delays).toEqual([5, 10, 15, 20, 25, 50, 100, 200, 400, 800]);
    expect(retryDelayMs(defaultRetryPolicy, 30)).toBe(3_600_000);
    const t = await setup({ queue: { retryPolicy: { initialDelayMs: 100, linearSteps: 1, maxDelayMs: 250 } } });
    const [id] = await t.enqueue({});
    const now = t.clock.now();
    await t.fail((await t.dequeue())[0]!);
    expect((await t.job(id!))!.runAfter).toBe(now + 100);
    await t.clock.advance(100);
    await t.fail((await t.dequeue())[0]!);
    expect((await t.job(id!))!.runAfter).toBe(now + 100 + 200);
    await t.clock.advance(200);
    await t.fail((await t.dequeue())[0]!);
    expect((await t.job(id!))!.runAfter).toBe(now + 300 + 250); // capped
  });

  it("a no-retry failure goes straight to failed", async () => {
    const t = await setup();
    const [id] = await t.enqueue({});
    await t.fail((await t.dequeue())[0]!, undefined, true);
    expect(await t.job(id!)).toMatchObject({ state: "failed", attemptsRemaining: 10 });
  });
});

describe("claim timeout", () => {
  it("returns a job whose worker vanished to pending, redelivers it, and refuses the late ack", async () => {
    const t = await setup({ queue: { claimTimeoutMs: 1000, retryPolicy: { initialDelayMs: 500 } } });
    const [id] = await t.enqueue({});
    const [first] = await t.dequeue();
    await t.clock.advance(999);
    expect((await t.job(id!))!.state).toBe("running");
    await t.clock.advance(1);
    expect(await t.job(id!)).toMatchObject({ state: "pending", attemptsRemaining: 10 }); // charged at hand-out
    const redelivery = t.dequeue(1, 10_000);
    await t.clock.advance(500);
    const [second] = await redelivery;
    expect(second).toMatchObject({ id, attempt: 2 });
    expect((await t.ok(first!))[0]!.outcome).toBe("stale_claim");
    expect((await t.ok(second!))[0]!.outcome).toBe("acknowledged");
  });

  it("a heartbeat checkpoint keeps a long job alive past the claim timeout", async () => {
    const t = await setup({ queue: { claimTimeoutMs: 1000 } });
    const [id] = await t.enqueue({});
    const [job] = await t.dequeue();
    for (let i = 0; i < 5; i++) {
      await t.clock.advance(600);
      const [r] = await t.engine.checkpoint({
        queue: t.queue,
        items: [
          { jobId: job!.id, claimToken: job!.claimToken, moveToPending: false, attemptsAllowed: 0, customStatus: "" },
        ],
      });
      expect(r!.outcome).toBe("acknowledged");
      expect(r!.claimExpiresAt).toBe(t.clock.now() + 1000);
    }
    expect((await t.job(id!))!.state).toBe("running");
    expect((await t.ok(job!))[0]!.outcome).toBe("acknowledged");
  });

  it("fails a job whose last attempt timed out", async () => {
    const t = await setup({ queue: { claimTimeoutMs: 200 } });
    const [id] = await t.enqueue({ attemptsAllowed: 1 });
    await t.dequeue();
    await t.clock.advance(1000);
    expect((await t.job(id!))!.state).toBe("failed");
  });
});

describe("checkpoint", () => {
  it("re-schedules a running job to pending without charging the attempt (cron-like)", async () => {
    const t = await setup();
    const [id] = await t.enqueue({ attemptsAllowed: 1 });
    const [job] = await t.dequeue();
    const runAfter = t.clock.now() + 60_000;
    await t.engine.checkpoint({
      queue: t.queue,
      items: [
        {
          jobId: job!.id,
          claimToken: job!.claimToken,
          moveToPending: true,
          runAfter,
          attemptsAllowed: 0,
          customStatus: "next run",
          newBody: new Uint8Array([7]),
        },
      ],
    });
    expect(await t.job(id!)).toMatchObject({
      state: "pending",
      runAfter,
      attemptsRemaining: 1,
      customStatus: "next run",
    });
    const waiting = t.dequeue(1, 120_000);
    await t.clock.advance(60_000);
    const [again] = await waiting;
    expect(again).toMatchObject({ id, attempt: 1 });
    expect(Array.from(again!.body)).toEqual([7]);
  });
});

describe("retention, retry and delete", () => {
  it("garbage-collects succeeded and failed jobs after their retention, from finishing time", async () => {
    const t = await setup({ queue: { succeededRetentionMs: 60_000, failedRetentionMs: 120_000 } });
    const [okId, badId] = await t.enqueue({}, {});
    await t.clock.advance(30_000); // waited before running: retention must not count this
    const [a, b] = await t.dequeue();
    await t.ok(a!);
    await t.fail(b!, undefined, true);
    await t.clock.advance(59_999);
    await t.maintenance.collectGarbage();
    expect(await t.job(okId!)).toBeDefined();
    await t.clock.advance(1);
    await t.maintenance.collectGarbage();
    expect(await t.job(okId!)).toBeUndefined();
    expect(await t.job(badId!)).toBeDefined();
    await t.clock.advance(60_000);
    await t.maintenance.collectGarbage();
    expect(await t.job(badId!)).toBeUndefined();
  });

  it("retries failed jobs by priority with fresh attempts and deletes by state and body", async () => {
    const t = await setup();
    await t.enqueue({ priority: 1 }, { priority: 2 }, { priority: 3, customStatus: "keep" });
    const jobs = await t.dequeue(2);
    for (const j of jobs) await t.fail(j, undefined, true);
    expect(await t.engine.retryFailedJobs({ queue: t.queue, priority: 2, attemptsAllowed: 3, limit: 0 })).toBe(1);
    const [retried] = await t.dequeue(5);
    expect(retried).toMatchObject({ priority: 2, attempt: 1, attemptsAllowed: 3 });
    expect(
      await t.engine.deleteJobs({
        queue: t.queue,
        filter: { state: "pending", priority: 0, bodyRegex: "^keep$" },
        limit: 0,
      }),
    ).toBe(0);
    expect(
      await t.engine.deleteJobs({ queue: t.queue, filter: { state: "failed", priority: 0, bodyRegex: "" }, limit: 0 }),
    ).toBe(1);
    await expect(
      t.engine.deleteJobs({ queue: t.queue, filter: { priority: 0, bodyRegex: "" }, limit: 0 }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("pages a scan with tokens and refuses a token it did not issue", async () => {
    const t = await setup();
    const ids = await t.enqueue(...Array.from({ length: 5 }, () => ({})));
    const seen: string[] = [];
    let pageToken = "";
    do {
      const page = await t.engine.scanJobs({
        queue: t.queue,
        filter: { priority: 0, bodyRegex: "" },
        limit: 2,
        pageToken,
      });
      seen.push(...page.jobs.map((j) => j.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(seen.sort()).toEqual([...ids].sort());
    await expect(
      t.engine.scanJobs({ queue: t.queue, filter: { priority: 0, bodyRegex: "" }, limit: 2, pageToken: "nonsense" }),
    ).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("keeps answers with bodies within limits.answerBodyBytesMax: a scan page ends early, a bigger lookup is refused", async () => {
    // Counts the body bytes the engine has the store read: the server's memory per call.
    const store = new MemoryStore();
    let bodyBytesRead = 0;
    const count = (jobs: Array<JobRecord | undefined>) => {
      for (const job of jobs) bodyBytesRead += job?.body.length ?? 0;
      return jobs;
    };
    const getMany = store.jobGetMany.bind(store);
    const scan = store.jobScan.bind(store);
    store.jobGetMany = async (p) => count(await getMany(p)) as Array<JobRecord | undefined>;
    store.jobScan = async (p) => count(await scan(p)) as JobRecord[];
    const t = await setup({ store, queue: { maxBodyBytes: 16 * 1024 * 1024 } });
    const body = new Uint8Array(16 * 1024 * 1024); // 4 of them pass 48 MiB
    const ids = await t.enqueue({ body }, { body }, { body }, { body });
    const readDuring = async <T>(call: () => Promise<T>): Promise<number> => {
      bodyBytesRead = 0;
      await call().catch(() => undefined);
      return bodyBytesRead;
    };
    const filter = { priority: 0, bodyRegex: "" };
    const pages: number[] = [];
    let pageToken = "";
    do {
      const page = await t.engine.scanJobs({ queue: t.queue, filter, limit: 10, pageToken, includeBody: true });
      pages.push(page.jobs.length);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    expect(pages).toEqual([3, 1]);
    const [first] = (await t.engine.scanJobs({ queue: t.queue, filter, limit: 10, pageToken: "", includeBody: true }))
      .jobs;
    expect(first!.body.length).toBe(body.length);
    expect((await t.engine.scanJobs({ queue: t.queue, filter, limit: 10, pageToken: "" })).jobs).toHaveLength(4); // without bodies: one page
    await expect(t.engine.getJobs(ids, true)).rejects.toMatchObject({ code: "resource_exhausted" });
    expect(await t.engine.getJobs(ids.slice(0, 3), true)).toHaveLength(3);
    expect(await t.engine.getJobs(ids, false)).toHaveLength(4);
    // Only what the answer carries is read: the page's bodies, none for a refused lookup.
    expect(
      await readDuring(() =>
        t.engine.scanJobs({ queue: t.queue, filter, limit: 10, pageToken: "", includeBody: true }),
      ),
    ).toBe(3 * body.length);
    expect(await readDuring(() => t.engine.getJobs(ids, true))).toBe(0);
    expect(await readDuring(() => t.engine.getJobs(ids, false))).toBe(0);
  });
});

describe("validation", () => {
  const expectError = async (p: Promise<unknown>, code: string, reason: string, message: RegExp) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RunlaterError);
    expect(err).toMatchObject({ code, reason });
    expect((err as Error).message).toMatch(message);
  };

  it("rejects a whole enqueue batch when one job is bad, writing nothing", async () => {
    const t = await setup();
    await expectError(
      t.enqueue({}, { priority: 4 }),
      "invalid_argument",
      "INVALID_PRIORITY",
      /jobs\[1\]\.priority is 4; this queue has priorities 1 \(highest\) to 3/,
    );
    expect(await t.engine.countJobs({ queue: t.queue, filter: { priority: 0, bodyRegex: "" } })).toBe(0);
  });

  it("names unknown queues with the way to create them", async () => {
    const t = await setup();
    await expectError(
      t.engine.enqueue([t.spec({ queue: "nope" })]),
      "not_found",
      "QUEUE_NOT_FOUND",
      /queue "nope" does not exist; create it/,
    );
    await expectError(
      t.engine.dequeue({ queue: "nope", limit: 1, waitMs: 0, dryRun: false }),
      "not_found",
      "QUEUE_NOT_FOUND",
      /nope/,
    );
    await expectError(
      t.engine.ack({ queue: "nope", succeeded: [], failed: [] }),
      "not_found",
      "QUEUE_NOT_FOUND",
      /nope/,
    );
  });

  it("checks queue names, body size and batch size", async () => {
    const t = await setup({ queue: { maxBodyBytes: 10 } });
    await expectError(t.engine.createQueue("", {}), "invalid_argument", "INVALID_QUEUE_NAME", /name is empty/);
    await expectError(
      t.engine.createQueue("bad-name", {}),
      "invalid_argument",
      "INVALID_QUEUE_NAME",
      /letters, digits and underscores/,
    );
    await expectError(t.engine.createQueue("x".repeat(65), {}), "invalid_argument", "INVALID_QUEUE_NAME", /1 to 64/);
    await expectError(
      t.enqueue({ body: new Uint8Array(11) }),
      "resource_exhausted",
      "BODY_TOO_LARGE",
      /11 bytes; this queue accepts at most 10/,
    );
    await expectError(
      t.enqueue(...Array.from({ length: 1001 }, () => ({}))),
      "resource_exhausted",
      "BATCH_TOO_LARGE",
      /at most 1000/,
    );
    await expectError(t.engine.enqueue([]), "invalid_argument", "INVALID_ARGUMENT", /jobs is empty/);
    await expectError(t.dequeue(1001), "resource_exhausted", "BATCH_TOO_LARGE", /limit 1001 is above the maximum 1000/);
  });

  it("dedupes enqueues by idempotency key", async () => {
    const t = await setup();
    const [a] = await t.enqueue({ idempotencyKey: "order-1" });
    const [b, c] = await t.enqueue({ idempotencyKey: "order-1" }, { idempotencyKey: "order-2" });
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(await t.engine.countJobs({ queue: t.queue, filter: { priority: 0, bodyRegex: "" } })).toBe(2);
  });
});

describe("queues", () => {
  it("updates only the masked fields, at runtime, and keeps fixed fields fixed", async () => {
    const t = await setup({ queue: { partitions: 2 } });
    const view = await t.engine.updateQueue(t.queue, { paused: true, priorities: 9, claimTimeoutMs: 1234 }, ["paused"]);
    expect(view.queue.config).toMatchObject({ paused: true, priorities: 3, claimTimeoutMs: 300_000, partitions: 2 });
    await expect(t.engine.updateQueue(t.queue, { partitions: 1 }, ["partitions"])).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(t.engine.updateQueue(t.queue, { fifo: true }, ["fifo"])).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(t.engine.updateQueue(t.queue, { priorities: 2 }, ["priorities"])).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(t.engine.updateQueue(t.queue, {}, [])).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("grows partitions at runtime: new jobs spread over them and are handed out; keyed jobs stay where their key was", async () => {
    const t = await setup({ queue: { partitions: 2 } });
    const [keyedBefore] = await t.enqueue({ idempotencyKey: "k1" });
    const view = await t.engine.updateQueue(t.queue, { partitions: 5 }, ["partitions"]);
    expect(view.queue.config).toMatchObject({ partitions: 5, keyPartitions: 2 });
    const ids = await t.enqueue({}, {}, {}, {}, {}, {});
    expect(new Set(ids.map((id) => Number(id.split(".")[1]))).size).toBe(5);
    // The same key after growth still lands on its old partition, so it is still deduplicated.
    expect(await t.enqueue({ idempotencyKey: "k1" })).toEqual([keyedBefore]);
    const handed = await t.dequeue(100);
    expect(new Set(handed.map((j) => j.id))).toEqual(new Set([keyedBefore, ...ids]));
    await expect(t.engine.updateQueue(t.queue, { partitions: 3 }, ["partitions"])).rejects.toMatchObject({
      code: "invalid_argument",
    });
    const fifo = await setup({ queue: { fifo: true } });
    await expect(fifo.engine.updateQueue(fifo.queue, { partitions: 2 }, ["partitions"])).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });

  it("shows live stats: counts per state and the oldest pending age", async () => {
    const t = await setup();
    await t.enqueue({}, {}, { runAfter: t.clock.now() + 100_000 });
    await t.clock.advance(7000);
    await t.dequeue(1);
    const { stats } = await t.engine.getQueue(t.queue);
    expect(stats).toEqual({ pending: 2, scheduled: 1, running: 1, succeeded: 0, failed: 0, oldestPendingAgeMs: 7000 });
  });

  it("deleting a queue removes its jobs; dequeue then reports it missing", async () => {
    const t = await setup();
    const [id] = await t.enqueue({});
    expect(await t.engine.deleteQueue(t.queue)).toBe(true);
    expect(await t.job(id!)).toBeUndefined();
    await expect(t.dequeue()).rejects.toMatchObject({ code: "not_found" });
    expect(await t.engine.deleteQueue(t.queue)).toBe(false);
  });

  it("deleting a queue stops its broker first: no lease renewed or taken again while the store deletes", async () => {
    // The Redis store purges a big queue's partitions for a while before it removes the
    // queue's record (MySQL is slow too, in other steps). Renewals due meanwhile used to
    // find the partition gone while the queue still showed, and logged "lease lost".
    class SlowDelete extends MemoryStore {
      gate: Promise<void> | undefined;
      private deleting = new Map<string, QueueRecord>();
      override async queueDelete(p: { name: string }) {
        const record = await super.queueGet(p);
        const deleted = await super.queueDelete(p);
        if (record) this.deleting.set(p.name, record); // partitions gone, record still readable
        await this.gate;
        this.deleting.delete(p.name);
        return deleted;
      }
      override async queueGet(p: { name: string }) {
        return this.deleting.get(p.name) ?? super.queueGet(p);
      }
      override async leaseAcquire(p: Parameters<MemoryStore["leaseAcquire"]>[0]) {
        return this.deleting.has(p.queue) ? undefined : super.leaseAcquire(p); // no lease on a purged partition
      }
    }
    const store = new SlowDelete();
    const lines: string[] = [];
    const t = await setup({ store, log: pino({ level: "info" }, { write: (line: string) => lines.push(line) }) });
    await t.enqueue({}, {});
    expect(await t.dequeue(1)).toHaveLength(1); // the broker holds the lease, one job buffered
    const before = lines.length;
    let open!: () => void;
    store.gate = new Promise((resolve) => (open = resolve));
    const deleting = t.engine.deleteQueue(t.queue);
    await t.clock.advance(60_000); // renewals come due (every 10 s) while the store deletes
    open();
    expect(await deleting).toBe(true);
    await t.clock.advance(60_000);
    expect(lines.slice(before).filter((l) => /lease lost|partition acquired/.test(l))).toEqual([]);
    // Nobody holds a lease on the gone queue's partition: another owner gets it at once.
    expect(
      await store.leaseAcquire({ queue: t.queue, partition: 0, owner: "other", ttlMs: 1000, now: t.clock.now() }),
    ).toBeDefined();
  });

  it("stopping the broker returns buffered jobs to pending in the store", async () => {
    const t = await setup();
    const ids = await t.enqueue({}, {}, {});
    await t.dequeue(1);
    expect(await t.broker.bufferedCount(t.queue)).toBe(2);
    await t.broker.stop();
    const states = await Promise.all(
      ids.slice(1).map(async (id) => (await t.store.jobGetMany({ ids: [id] }))[0]!.state),
    );
    expect(states).toEqual(["pending", "pending"]);
  });
});
