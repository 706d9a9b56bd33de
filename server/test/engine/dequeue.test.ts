import { describe, expect, it } from "vitest";
import { settle } from "../../src/domain/clock.js";
import { setup } from "./harness.js";

describe("dequeue order and eligibility", () => {
  it("hands out the highest priority first, then the oldest, across partitions", async () => {
    const t = await setup({ queue: { partitions: 3 } });
    const [low] = await t.enqueue({ priority: 3 });
    const [mid] = await t.enqueue({ priority: 2 });
    const [oldHigh] = await t.enqueue({ priority: 1 });
    await t.clock.advance(10);
    const [newHigh] = await t.enqueue({ priority: 1 });
    const jobs = await t.dequeue(10);
    expect(jobs.map((j) => j.id)).toEqual([oldHigh, newHigh, mid, low]);
  });

  it("never hands out a job before its run_after; a run_after in the past means now", async () => {
    const t = await setup();
    const [later] = await t.enqueue({ runAfter: t.clock.now() + 5000 });
    const [past] = await t.enqueue({ runAfter: t.clock.now() - 5000 });
    expect((await t.dequeue()).map((j) => j.id)).toEqual([past]);
    await t.clock.advance(4999);
    expect(await t.dequeue()).toEqual([]);
    await t.clock.advance(1);
    expect((await t.dequeue()).map((j) => j.id)).toEqual([later]);
  });

  it("serves a better priority that arrives while the buffer is full of worse jobs", async () => {
    const t = await setup({ bufferSize: 2 });
    await t.enqueue({ priority: 3 }, { priority: 3 }, { priority: 3 }, { priority: 3 });
    expect(await t.dequeue(1)).toHaveLength(1); // buffer now holds priority-3 jobs
    const [urgent] = await t.enqueue({ priority: 1 });
    expect((await t.dequeue(1)).map((j) => j.id)).toEqual([urgent]);
    expect(await t.dequeue(10)).toHaveLength(3);
  });

  it("buffers no more body bytes than bufferBytes, yet serves every job, a larger one included", async () => {
    const t = await setup({ bufferBytes: 1000 });
    const body = (n: number) => new Uint8Array(n);
    const ids = await t.enqueue(
      ...Array.from({ length: 10 }, () => ({ body: body(300) })),
      { body: body(5000) },
      { body: body(10) },
    );
    const first = await t.dequeue(1);
    expect(first.map((j) => j.id)).toEqual([ids[0]]);
    // Claims keep at most 3 × 300 bytes buffered (a fourth would pass 1000), topped up
    // after the hand-out.
    await settle();
    expect(await t.broker.bufferedCount(t.queue)).toBe(3);
    const rest = [
      ...(await t.dequeue(100)),
      ...(await t.dequeue(100)),
      ...(await t.dequeue(100)),
      ...(await t.dequeue(100)),
    ];
    expect([...first, ...rest].map((j) => j.id)).toEqual(ids); // none skipped, in order, the 5000-byte one too
    expect(await t.dequeue(100)).toEqual([]);
  });

  it("bounds the body bytes buffered across partitions by bufferBytesTotal, yet serves every job", async () => {
    const enqueueAndPeek = async (bufferBytesTotal?: number) => {
      const t = await setup({ bufferBytesTotal, queue: { partitions: 3 } });
      const ids = await t.enqueue(...Array.from({ length: 18 }, () => ({ body: new Uint8Array(300) })));
      const first = await t.dequeue(1);
      await settle(); // every partition refilled
      return { t, ids, first, buffered: t.broker.bufferedBytes() };
    };
    expect((await enqueueAndPeek()).buffered).toBe(17 * 300);
    const { t, ids, first, buffered } = await enqueueAndPeek(1000);
    // One claim may take the room left (3 × 300 bytes); a partition whose buffer is empty still takes one job.
    expect(buffered).toBeLessThanOrEqual(1000 + 2 * 300);
    const all = [...first];
    for (let call = 0; call < 40 && all.length < ids.length; call++) all.push(...(await t.dequeue(5)));
    expect(all.map((j) => j.id).sort()).toEqual([...ids].sort());
    expect(t.broker.bufferedBytes()).toBe(0);
  });

  it("serves a better priority that arrives while the buffer is full in bytes of worse jobs", async () => {
    const t = await setup({ bufferBytes: 1000 });
    const body = new Uint8Array(500);
    await t.enqueue({ priority: 3, body }, { priority: 3, body }, { priority: 3, body }, { priority: 3, body });
    expect(await t.dequeue(1)).toHaveLength(1);
    await settle(); // topped up: two 500-byte jobs, the whole 1000 bytes
    expect(await t.broker.bufferedCount(t.queue)).toBe(2);
    const [urgent] = await t.enqueue({ priority: 1 });
    expect((await t.dequeue(1)).map((j) => j.id)).toEqual([urgent]);
    expect(await t.dequeue(10)).toHaveLength(3);
  });

  it("keeps one answer's bodies within limits.dequeueBodyBytesMax, or one job, dry runs too", async () => {
    const t = await setup({ queue: { maxBodyBytes: 8 * 1024 * 1024 } });
    const mib = new Uint8Array(1024 * 1024);
    const ids = await t.enqueue(...Array.from({ length: 5 }, () => ({ body: mib })), {
      body: new Uint8Array(6 * 1024 * 1024),
    });
    const peek = await t.engine.dequeue({ queue: t.queue, limit: 10, waitMs: 0, dryRun: true });
    expect(peek.jobs.map((j) => j.id)).toEqual(ids.slice(0, 3));
    const answers: string[][] = [];
    for (let call = 0; call < 10 && answers.flat().length < ids.length; call++)
      answers.push((await t.dequeue(10)).map((j) => j.id));
    expect(answers).toEqual([ids.slice(0, 3), ids.slice(3, 5), [ids[5]]]);
  });

  it("a dry run returns due jobs with bodies and changes nothing", async () => {
    const t = await setup();
    const [id] = await t.enqueue({ customStatus: "peek me" });
    const dry = await t.engine.dequeue({ queue: t.queue, limit: 5, waitMs: 0, dryRun: true });
    const again = await t.engine.dequeue({ queue: t.queue, limit: 5, waitMs: 0, dryRun: true });
    expect(dry.jobs.map((j) => j.id)).toEqual([id]);
    expect(again.jobs.map((j) => j.id)).toEqual([id]);
    expect(new TextDecoder().decode(dry.jobs[0]!.body)).toBe("peek me");
    expect((await t.job(id!))!.state).toBe("pending");
    expect(await t.dequeue()).toMatchObject([{ id, attempt: 1 }]);
  });
});

describe("long poll", () => {
  it("returns as soon as a job is enqueued, without waiting for a tick", async () => {
    const t = await setup();
    const pending = t.dequeue(1, 30_000);
    expect(await t.isSettled(pending)).toBe(false);
    const [id] = await t.enqueue({});
    expect(await t.isSettled(pending)).toBe(true);
    expect((await pending).map((j) => j.id)).toEqual([id]);
  });

  it("is woken by a job that became due while it was still looking (before it waited)", async () => {
    const t = await setup();
    await t.enqueue({});
    const [running] = await t.dequeue(1);
    // The long poll starts looking; in the same turn the job fails back to pending, so the
    // announcement lands while the poll is inside take(), not yet a waiter.
    const pending = t.dequeue(1, 30_000);
    await t.fail(running!, 0);
    expect(await t.isSettled(pending)).toBe(true);
    expect((await pending).map((j) => j.id)).toEqual([running!.id]);
  });

  it("loses no buffered job when a stale notice drops the queue's broker state while the queue exists", async () => {
    const t = await setup();
    const ids = await t.enqueue({}, {}, {});
    const [first] = await t.dequeue(1); // the other two now sit BUFFERED in the broker
    t.broker.onQueueDeleted(t.queue); // e.g. a late "deleted" notice for an older queue of this name
    const rest = await t.dequeue(10);
    expect([first!.id, ...rest.map((j) => j.id)].sort()).toEqual([...ids].sort());
  });

  it("returns when a scheduled job's run_after comes", async () => {
    const t = await setup();
    const [id] = await t.enqueue({ runAfter: t.clock.now() + 5000 });
    const pending = t.dequeue(1, 30_000);
    await t.clock.advance(4999);
    expect(await t.isSettled(pending)).toBe(false);
    await t.clock.advance(1);
    expect((await pending).map((j) => j.id)).toEqual([id]);
  });

  it("returns empty when the wait runs out or the caller goes away", async () => {
    const t = await setup();
    const timed = t.dequeue(1, 2000);
    await t.clock.advance(2000);
    expect(await timed).toEqual([]);
    const abort = new AbortController();
    const aborted = t.dequeue(1, 30_000, abort.signal);
    abort.abort();
    expect(await aborted).toEqual([]);
  });

  it("wakes a waiter when a failed job's retry delay ends", async () => {
    const t = await setup();
    await t.enqueue({});
    const [job] = await t.dequeue();
    await t.fail(job!, 3000);
    const pending = t.dequeue(1, 30_000);
    await t.clock.advance(2999);
    expect(await t.isSettled(pending)).toBe(false);
    await t.clock.advance(1);
    expect(await pending).toMatchObject([{ id: job!.id, attempt: 2 }]);
  });
});

describe("rate limit and pause", () => {
  it("caps jobs handed out per second, counted in jobs delivered, changeable at runtime", async () => {
    const t = await setup({ queue: { maxDequeuePerSecond: 2 } });
    await t.enqueue(...Array.from({ length: 10 }, () => ({})));
    expect(await t.dequeue(10)).toHaveLength(2);
    expect(await t.dequeue(10)).toHaveLength(0);
    await t.clock.advance(1000);
    expect(await t.dequeue(1)).toHaveLength(1);
    expect(await t.dequeue(10)).toHaveLength(1);
    await t.engine.updateQueue(t.queue, { maxDequeuePerSecond: 0 }, ["max_dequeue_per_second"]);
    expect(await t.dequeue(10)).toHaveLength(6);
  });

  it("a paused queue hands out nothing but still applies piggy-backed acks; resuming wakes waiters", async () => {
    const t = await setup();
    await t.enqueue({}, {});
    const [job] = await t.dequeue(1);
    await t.engine.updateQueue(t.queue, { paused: true }, ["paused"]);
    const result = await t.engine.dequeue({
      queue: t.queue,
      limit: 5,
      waitMs: 0,
      dryRun: false,
      ack: { queue: "", succeeded: [{ jobId: job!.id, claimToken: job!.claimToken, customStatus: "" }], failed: [] },
    });
    expect(result.jobs).toEqual([]);
    expect(result.ack).toEqual([{ jobId: job!.id, outcome: "acknowledged" }]);
    expect((await t.job(job!.id))!.state).toBe("succeeded");
    const waiting = t.dequeue(5, 30_000);
    expect(await t.isSettled(waiting)).toBe(false);
    await t.engine.updateQueue(t.queue, { paused: false }, ["paused"]);
    expect(await waiting).toHaveLength(1);
  });
});

describe("abandoned dequeue", () => {
  it("gives jobs back, charging nothing, when the caller went away while they were being started", async () => {
    const t = await setup();
    const [id] = await t.enqueue({ attemptsAllowed: 2 });
    const abort = new AbortController();
    // The client disconnects while the store write that starts the job is in flight: a claim
    // that hands out (an empty buffer) or a start.
    const claimMany = t.store.jobClaimMany.bind(t.store);
    t.store.jobClaimMany = async (p) => {
      const claimed = await claimMany(p);
      if (p.start) abort.abort();
      return claimed;
    };
    const startMany = t.store.jobStartMany.bind(t.store);
    t.store.jobStartMany = async (p) => {
      const started = await startMany(p);
      abort.abort();
      return started;
    };
    expect(await t.dequeue(1, 0, abort.signal)).toEqual([]);
    expect(await t.job(id!)).toMatchObject({ state: "pending", attemptsRemaining: 2 });
  });
});

describe("rate limit changed at runtime", () => {
  it("gives a queue moved from unlimited to N/s a full second's burst, like a new queue", async () => {
    const t = await setup();
    await t.enqueue(...Array.from({ length: 10 }, () => ({})));
    expect(await t.dequeue(1)).toHaveLength(1); // the limiter has been used while unlimited
    await t.engine.updateQueue(t.queue, { maxDequeuePerSecond: 5 }, ["max_dequeue_per_second"]);
    expect(await t.dequeue(10)).toHaveLength(5);
    expect(await t.dequeue(10)).toHaveLength(0);
  });
});

describe("dequeue with a piggy-backed ack that fails", () => {
  it("fails the call and hands the jobs it started back, charging nothing", async () => {
    const t = await setup();
    const [id] = await t.enqueue({ attemptsAllowed: 2 });
    const result = t.engine.dequeue({
      queue: t.queue,
      limit: 5,
      waitMs: 0,
      dryRun: false,
      ack: { queue: "no_such_queue", succeeded: [], failed: [] },
    });
    await expect(result).rejects.toMatchObject({ code: "not_found" });
    expect(await t.job(id!)).toMatchObject({ state: "pending", attemptsRemaining: 2 });
    expect(await t.dequeue()).toMatchObject([{ id, attempt: 1 }]);
  });
});
