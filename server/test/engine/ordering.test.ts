/**
 * Ordering keys and FIFO queues through the engine and the broker: validation, partition
 * choice, one job in flight per key, and waiters woken when a key's next job is released.
 */
import { describe, expect, it } from "vitest";
import { jobToProto } from "../../src/api/convert.js";
import { RunlaterError } from "../../src/domain/errors.js";
import { FIFO_ORDERING_KEY } from "../../src/domain/ordering.js";
import { setup } from "./harness.js";

const bodies = (jobs: Array<{ body: Uint8Array }>) => jobs.map((j) => new TextDecoder().decode(j.body));

describe("ordering key validation", () => {
  it("accepts 128 characters (code points), refuses 129 and NUL, naming the job, writing nothing", async () => {
    const t = await setup();
    await t.enqueue({ orderingKey: "🔑".repeat(128) }); // 256 UTF-16 units
    const tooLong = await t.enqueue({}, { orderingKey: "k".repeat(129) }).catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(RunlaterError);
    expect(tooLong).toMatchObject({ code: "invalid_argument", field: "jobs[1].ordering_key" });
    expect((tooLong as Error).message).toMatch(/ordering_key is longer than 128 characters/);
    const nul = await t.enqueue({ orderingKey: "a\u0000b" }).catch((e: unknown) => e);
    expect(nul).toMatchObject({ code: "invalid_argument", field: "jobs[0].ordering_key" });
    expect((nul as Error).message).toMatch(/must not contain NUL/);
    expect(await t.engine.countJobs({ queue: t.queue, filter: { priority: 0, bodyRegex: "" } })).toBe(1);
  });
});

describe("partition choice", () => {
  it("puts a key's jobs on one partition; with both keys the ordering key decides", async () => {
    const partitionOf = (id: string) => Number(id.split(".")[1]);
    const t = await setup({ queue: { partitions: 8 } });
    const [solo] = await t.enqueue({ orderingKey: "user-42" });
    const both = await t.enqueue(
      ...Array.from({ length: 6 }, (_, i) => ({ orderingKey: "user-42", idempotencyKey: `op-${i}` })),
    );
    expect(new Set([solo!, ...both].map(partitionOf))).toEqual(new Set([partitionOf(solo!)]));
    // Alone, those idempotency keys spread over partitions: with the ordering key they did not.
    const other = await setup({ queue: { partitions: 8 } });
    const alone = await other.enqueue(...Array.from({ length: 6 }, (_, i) => ({ idempotencyKey: `op-${i}` })));
    expect(new Set(alone.map(partitionOf)).size).toBeGreaterThan(1);
    const spread = await t.enqueue(...Array.from({ length: 16 }, (_, i) => ({ orderingKey: `user-${i}` })));
    expect(new Set(spread.map(partitionOf)).size).toBeGreaterThan(1);
  });
});

describe("ordering keys through the broker", () => {
  it("hands out only the head of a key, even to a Dequeue asking for 10; keys run in parallel", async () => {
    const t = await setup();
    await t.enqueue(...["a1", "a2", "a3"].map((customStatus) => ({ customStatus, orderingKey: "a" })));
    await t.enqueue(
      { customStatus: "b1", orderingKey: "b" },
      { customStatus: "free" },
      { customStatus: "b2", orderingKey: "b" },
    );
    const first = await t.dequeue(10);
    expect(bodies(first)).toEqual(["a1", "b1", "free"]);
    expect(await t.dequeue(10)).toEqual([]);
    const [a1, b1] = first;
    await t.ok(a1!);
    await t.fail(b1!, 0, true);
    expect(bodies(await t.dequeue(10))).toEqual(["a2", "b2"]);
  });

  it("wakes a long-polling worker when the head ends, with the key's next job", async () => {
    const t = await setup();
    const [head, next] = await t.enqueue({ orderingKey: "k" }, { orderingKey: "k" });
    const [running] = await t.dequeue(10);
    expect(running!.id).toBe(head);
    const waiting = t.dequeue(10, 30_000);
    expect(await t.isSettled(waiting)).toBe(false);
    await t.ok(running!);
    expect(await t.isSettled(waiting)).toBe(true);
    expect((await waiting).map((j) => j.id)).toEqual([next]);
  });

  it("keeps the order through a claim timeout, and releases the next job when the head fails for good", async () => {
    const t = await setup({ queue: { claimTimeoutMs: 1000, retryPolicy: { initialDelayMs: 500 } } });
    const [head, next] = await t.enqueue({ orderingKey: "k", attemptsAllowed: 2 }, { orderingKey: "k" });
    await t.dequeue(10);
    await t.clock.advance(1000); // expired: back to pending, still the head
    expect((await t.job(next!))!.state).toBe("waiting");
    await t.clock.advance(500);
    expect((await t.dequeue(10)).map((j) => j.id)).toEqual([head]);
    const waiting = t.dequeue(10, 30_000);
    await t.clock.advance(1000); // the last attempt times out: failed, the next one goes
    expect((await t.job(head!))!.state).toBe("failed");
    expect((await waiting).map((j) => j.id)).toEqual([next]);
  });

  it("releases the next job when the head is deleted", async () => {
    const t = await setup();
    const [, next] = await t.enqueue({ orderingKey: "k" }, { orderingKey: "k" });
    await t.dequeue(10);
    const waiting = t.dequeue(10, 30_000);
    expect(await t.isSettled(waiting)).toBe(false);
    expect(
      await t.engine.deleteJobs({ queue: t.queue, filter: { state: "running", priority: 0, bodyRegex: "" }, limit: 0 }),
    ).toBe(1);
    expect((await waiting).map((j) => j.id)).toEqual([next]);
  });

  it("a dry run shows only the heads", async () => {
    const t = await setup();
    const [a] = await t.enqueue({ orderingKey: "k" }, { orderingKey: "k" });
    const dry = await t.engine.dequeue({ queue: t.queue, limit: 10, waitMs: 0, dryRun: true });
    expect(dry.jobs.map((j) => j.id)).toEqual([a]);
  });

  it("shows the user's key on jobs", async () => {
    const t = await setup();
    const [id] = await t.enqueue({ orderingKey: "user-42" });
    const job = (await t.job(id!))!;
    expect(job.orderingKey).toBe("user-42");
    expect(jobToProto(job, false).orderingKey).toBe("user-42");
  });
});

describe("FIFO queues", () => {
  it("hands out one job at a time in enqueue order, whatever the priorities", async () => {
    const t = await setup({ queue: { fifo: true, priorities: 3 } });
    const priorities = [3, 1, 2, 1, 3];
    const ids = await t.enqueue(...priorities.map((priority, i) => ({ priority, customStatus: `job ${i}` })));
    for (const [i, id] of ids.entries()) {
      const jobs = await t.dequeue(10);
      expect(jobs.map((j) => j.id)).toEqual([id]);
      expect(jobs[0]!.priority).toBe(priorities[i]); // kept, shown, but not used to order
      expect(await t.dequeue(10)).toEqual([]);
      await t.ok(jobs[0]!);
    }
  });

  it("ignores user ordering keys: the whole queue is one sequence, shown without a key", async () => {
    const t = await setup({ queue: { fifo: true } });
    const [a, b] = await t.enqueue({ orderingKey: "x" }, { orderingKey: "y" });
    const stored = (await t.job(a!))!;
    expect(stored.orderingKey).toBe(FIFO_ORDERING_KEY);
    expect(jobToProto(stored, false).orderingKey).toBe("");
    expect((await t.dequeue(10)).map((j) => j.id)).toEqual([a]);
    expect((await t.job(b!))!.state).toBe("waiting"); // the store's view; users see PENDING
    expect(jobToProto((await t.job(b!))!, false).state).toBe(jobToProto(stored, false).state);
  });

  it("keeps a failed attempt at the head: the retry runs before the jobs behind it", async () => {
    const t = await setup({ queue: { fifo: true } });
    const [first, second] = await t.enqueue({}, {});
    const [job] = await t.dequeue(10);
    await t.fail(job!, 100);
    await t.clock.advance(100);
    expect((await t.dequeue(10)).map((j) => j.id)).toEqual([first]);
    expect((await t.job(second!))!.state).toBe("waiting");
  });
});
