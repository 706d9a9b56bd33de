/**
 * The frontend's long-poll race over a queue's owners: an owner whose answer was already
 * on its way when another owner's answer won must not have its jobs dropped (they would
 * sit RUNNING until their claims time out); they are released instead. Owners still
 * waiting are cancelled after a short grace, and their brokers are told which calls were
 * cancelled, so they can hand back an answer the cancellation cut off.
 */
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { HandedOut } from "../../src/cluster/forwarded-answers.js";
import { Router } from "../../src/cluster/router.js";
import type { JobRecord } from "../../src/domain/job-record.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";

const job = (id: string) => ({ id }) as JobRecord;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A forwarded call: empty at once when it may not wait; else `jobs` after `afterMs`, or rejected when cancelled first (like fetch). */
function answer(
  jobs: JobRecord[],
  afterMs: number,
  seen: { cancelledAt?: number },
  signal?: AbortSignal,
  waitMs = 0,
): Promise<JobRecord[]> {
  if (waitMs === 0) return Promise.resolve([]);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(jobs), afterMs);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      seen.cancelledAt = Date.now() - started;
      reject(new Error("aborted"));
    });
  });
}

function routerWith(peers: Record<string, (signal?: AbortSignal, waitMs?: number) => Promise<JobRecord[]>>) {
  const released: HandedOut[][] = [];
  /** Per owner: the call id of its last long poll, and the ids it was told were cancelled. */
  const calls: Record<string, { lastId?: string; cancelled: string[] }> = Object.fromEntries(
    Object.keys(peers).map((id) => [id, { cancelled: [] }]),
  );
  const router = new Router({
    membership: {
      selfId: undefined,
      ownersOf: () => Object.keys(peers).map((id) => ({ id, url: id })),
      refreshNow: async () => {},
    } as never,
    peers: {
      dequeue: (url: string, p: { signal?: AbortSignal; waitMs: number; callId?: string }) => {
        if (p.waitMs > 0) calls[url]!.lastId = p.callId;
        return peers[url]!(p.signal, p.waitMs);
      },
      releaseForwarded: async (url: string, ids: string[]) => {
        calls[url]!.cancelled.push(...ids);
      },
    } as never,
    store: {
      queueGet: async () => ({ name: "q", config: resolveQueueConfig({ partitions: 2 }), createdAt: 0 }),
    } as never,
    clock: { now: () => Date.now() } as never,
    log: pino({ level: "silent" }),
  });
  router.release = async (jobs) => {
    released.push(jobs);
  };
  return { router, released, calls };
}

describe("the frontend's long-poll race", () => {
  it("releases the jobs of an owner that answered just after the winner, instead of dropping its answer", async () => {
    const a = {},
      b = {};
    const { router, released } = routerWith({
      a: (signal, waitMs) => answer([job("a1")], 10, a, signal, waitMs),
      b: (signal, waitMs) => answer([job("b1"), job("b2")], 15, b, signal, waitMs),
    });
    expect((await router.dequeue({ queue: "q", limit: 10, waitMs: 2000 })).map((j) => j.id)).toEqual(["a1"]);
    await sleep(50);
    expect(released.map((jobs) => jobs.map((j) => j.id))).toEqual([["b1", "b2"]]);
  });

  it("cancels an owner still waiting once the grace after the winner's answer is over", async () => {
    const b: { cancelledAt?: number } = {};
    const { router, released, calls } = routerWith({
      a: (signal, waitMs) => answer([job("a1")], 10, {}, signal, waitMs),
      b: (signal, waitMs) => answer([job("b1")], 5000, b, signal, waitMs),
    });
    await router.dequeue({ queue: "q", limit: 10, waitMs: 5000 });
    await sleep(400);
    expect(b.cancelledAt).toBeGreaterThanOrEqual(200);
    expect(b.cancelledAt).toBeLessThan(400);
    expect(released).toEqual([]);
    // b is told its call was cancelled (an answer it sent meanwhile would be lost here); a, which answered, is not.
    expect(calls.b!.lastId).toMatch(/^[\w-]{12}$/);
    expect(calls.b!.cancelled).toEqual([calls.b!.lastId]);
    expect(calls.a!.cancelled).toEqual([]);
  });

  it("names every call still open to its broker when the caller gives up", async () => {
    const { router, calls } = routerWith({
      a: (signal, waitMs) => answer([job("a1")], 5000, {}, signal, waitMs),
      b: (signal, waitMs) => answer([job("b1")], 5000, {}, signal, waitMs),
    });
    const caller = new AbortController();
    const dequeued = router.dequeue({ queue: "q", limit: 10, waitMs: 5000, signal: caller.signal });
    await sleep(50);
    caller.abort();
    expect(await dequeued).toEqual([]);
    expect(calls.a!.cancelled).toEqual([calls.a!.lastId]);
    expect(calls.b!.cancelled).toEqual([calls.b!.lastId]);
    expect(calls.a!.lastId).not.toBe(calls.b!.lastId);
  });
});
