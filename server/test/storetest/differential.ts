/**
 * Differential check of a store against the memory store (transitions.ts applied
 * directly): one seeded random sequence of store calls runs on both, and after every step
 * both must hold the same jobs and have answered the same. Limits are large where stores
 * may break ties differently (seq is global in memory, per shard or partition elsewhere).
 * `other` must be empty: the claim-timeout sweep is global. Generalised from
 * server/test/store/redis-differential.redis.test.ts so every store can run it. Some jobs
 * are workflow jobs' runs (their ACKs answer "workflow"); with `workflows`, the sequence
 * also takes workflow steps (differential-workflows.ts) on a store that keeps workflows,
 * and schedule fires on one that keeps schedules too.
 */
import { expect } from "vitest";
import { newJobId } from "../../src/domain/job-id.js";
import type { JobRecord, NewJob } from "../../src/domain/job-record.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { Store } from "../../src/store/store.js";
import { jobContext, workflowSteps } from "./differential-workflows.js";
import { T0 } from "./fixtures.js";

/** mulberry32: a small seeded PRNG, so a failing seed can be replayed. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A job without the fields the stores may legitimately number differently: seq, and the
 * epoch it was buffered under (its partition's one lease in a sequence: Redis numbers
 * epochs per shard, so with both partitions on one shard its second lease is epoch 2).
 */
const comparable = (job: JobRecord | undefined) =>
  job ? { ...job, seq: 0, bufferEpoch: Math.sign(job.bufferEpoch), body: Array.from(job.body) } : undefined;
const byId = (jobs: JobRecord[]) => jobs.map(comparable).sort((a, b) => (a!.id < b!.id ? -1 : 1));

export async function runDifferential(seed: number, other: Store, o: { workflows?: boolean } = {}): Promise<void> {
  const rand = prng(seed);
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
  const stores: Store[] = [new MemoryStore(), other];
  const queue = `diff_${seed}`;
  const partitions = 2;
  for (const s of stores)
    await s.queueCreate({ name: queue, config: resolveQueueConfig({ partitions, priorities: 3 }), now: T0 });
  const ids: string[] = [];
  let now = T0;
  let tokens = 0;
  // Draw every random value before calling `both`: its callback runs once per store.
  const both = async <R>(call: (s: Store) => Promise<R>, compare: (r: R) => unknown = (r) => r): Promise<R> => {
    const [a, b] = await Promise.all(stores.map(call));
    expect(compare(b!)).toEqual(compare(a!));
    return a!;
  };
  // Each store's epoch for the partition: a store numbers epochs per shard (so one shard
  // holding both partitions counts on where the memory store starts again), not per partition.
  const leaseOf = async (partition: number) => {
    const epochs = new Map<Store, number>();
    await both(
      async (s) => {
        const lease = (await s.leaseAcquire({ queue, partition, owner: "o", ttlMs: 600_000, now }))!;
        epochs.set(s, lease.epoch);
        return lease;
      },
      ({ epoch: _, ...lease }) => lease,
    );
    return (s: Store) => epochs.get(s)!;
  };
  const running = async () =>
    (await stores[0]!.jobGetMany({ ids })).filter((j): j is JobRecord => j?.state === "running");
  const workflows = workflowSteps({ rand, pick }, seed, queue, partitions);

  for (let step = 0; step < 60; step++) {
    now += Math.floor(rand() * 400);
    const op = pick([
      "insert",
      "insert",
      "claim",
      "claim",
      "claimstart",
      "complete",
      "fail",
      "checkpoint",
      "expire",
      "release",
      "retry",
      "gc",
      "delete",
      ...(o.workflows ? (["wfstart", "wfstep", "wfstep", "wfgc"] as const) : []),
      ...(o.workflows && other.schedules ? (["wffire"] as const) : []),
    ]);
    if (op === "insert") {
      const jobs: NewJob[] = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => {
        // As the engine does, a key always goes to one partition (stores dedupe and order
        // per partition); with both keys the ordering key decides, so an idempotency key
        // used with one is made to name it (all stores then dedupe alike).
        const key = rand() < 0.2 ? Math.floor(rand() * 4) : -1;
        const order = rand() < 0.35 ? Math.floor(rand() * 3) : -1;
        const partition =
          order >= 0 ? order % partitions : key >= 0 ? key % partitions : Math.floor(rand() * partitions);
        return {
          id: newJobId(queue, partition, now),
          queue,
          partition,
          priority: 1 + Math.floor(rand() * 3),
          body: Uint8Array.from({ length: Math.floor(rand() * 8) }, () => Math.floor(rand() * 256)),
          runAfter: now + pick([0, 0, -50, 300, 2000]),
          attemptsAllowed: 1 + Math.floor(rand() * 3),
          customStatus: pick(["", "new", "ünïcödé"]),
          createdAt: now,
          idempotencyKey: key < 0 ? "" : order >= 0 ? `k${key}o${order}` : `k${key}`,
          orderingKey: order >= 0 ? `o${order}` : "",
          ...(rand() < 0.2 ? { workflow: jobContext({ rand, pick }, `i${seed}_none`) } : {}),
        };
      });
      ids.push(...(await both((s) => s.jobInsertMany({ jobs, now }))));
    } else if (op === "claim") {
      const partition = Math.floor(rand() * partitions);
      const epoch = await leaseOf(partition);
      const limit = 1 + Math.floor(rand() * 5);
      const claimed = await both((s) => s.jobClaimMany({ queue, partition, epoch: epoch(s), limit, now }), byId);
      const plans = claimed
        .filter(() => rand() < 0.8)
        .map((j) => ({
          id: j.id,
          claimToken: `t${++tokens}`,
          claimExpiresAt: now + pick([100, 1000, 5000]),
          retryDelayMs: pick([0, 250, 1000]),
        }));
      await both((s) => s.jobStartMany({ queue, partition, epoch: epoch(s), plans, now }));
    } else if (op === "claimstart") {
      // A claim that hands out its leading jobs on their first attempt (store/claim-start.ts):
      // more claimed than handed out at times, so some stay buffered.
      const partition = Math.floor(rand() * partitions);
      const epoch = await leaseOf(partition);
      const start = {
        claimToken: `t${++tokens}`,
        claimExpiresAt: now + pick([100, 1000, 5000]),
        retryDelayMs: pick([0, 250, 1000]),
        max: 1 + Math.floor(rand() * 4),
        maxBytes: pick([4, 12, 1_000_000]),
      };
      const limit = start.max + Math.floor(rand() * 3);
      await both((s) => s.jobClaimMany({ queue, partition, epoch: epoch(s), limit, now, start }), byId);
    } else if (op === "complete" || op === "fail" || op === "checkpoint") {
      const targets = (await running()).filter(() => rand() < 0.6);
      const token = (j: JobRecord) => (rand() < 0.1 ? "stale" : j.claimToken);
      if (op === "complete") {
        const items = targets.map((j) => ({
          id: j.id,
          claimToken: token(j),
          customStatus: pick(["", "done", "x".repeat(700)]),
        }));
        await both((s) => s.jobCompleteMany({ items, now }));
      } else if (op === "fail") {
        const items = targets.map((j) => ({
          id: j.id,
          claimToken: token(j),
          customStatus: pick(["", "boom"]),
          retryDelayMs: pick([undefined, 0, 500]),
          noRetry: rand() < 0.2,
        }));
        await both((s) => s.jobFailMany({ items, now }));
      } else {
        const items = targets.map((j) => ({
          id: j.id,
          claimToken: token(j),
          claimExpiresAt: now + 3000,
          newBody: rand() < 0.3 ? Uint8Array.of(0xff, Math.floor(rand() * 256)) : undefined,
          moveToPending: rand() < 0.4,
          runAfter: now + pick([0, 500]),
          attemptsAllowed: pick([0, 0, 4]),
          customStatus: pick(["", "step"]),
        }));
        await both((s) => s.jobCheckpointMany({ items, now }));
      }
    } else if (op === "expire") {
      const [exact, other] = await Promise.all(stores.map((s) => s.jobClaimExpire({ now, limit: 1000 })));
      expect(byId(other!.expired)).toEqual(byId(exact!.expired));
      // A store may look again earlier than the next deadline, or up to 100 ms after it (Store.jobClaimExpire).
      if (exact!.nextExpiryAt !== undefined) expect(other!.nextExpiryAt).toBeLessThanOrEqual(exact!.nextExpiryAt + 100);
    } else if (op === "release") {
      const partition = Math.floor(rand() * partitions);
      const epoch = await leaseOf(partition);
      await both((s) => s.jobReleaseBuffered({ queue, partition, belowEpoch: epoch(s) + 1 }));
    } else if (op === "retry") {
      const priority = pick([undefined, 1, 2]);
      await both((s) =>
        s.jobRetryFailed({ queue, priority, attemptsAllowed: 2, runAfter: now + 100, limit: 1000, now }),
      );
    } else if (op === "gc") {
      await both((s) =>
        s.jobDeleteFinished({ queue, succeededBefore: now - 500, failedBefore: now - 1500, limit: 1000 }),
      );
    } else if (op === "wfstart" || op === "wfstep" || op === "wfgc" || op === "wffire") {
      await workflows.step(op, { now, memory: stores[0]!, running: await running(), ids, both });
    } else {
      const filter = {
        state: pick(["pending", "running", "succeeded", "failed"] as const),
        priority: pick([undefined, 3]),
      };
      await both((s) => s.jobDeleteMany({ queue, filter, limit: 1000, now }));
    }
    // The whole state, and the read paths, agree after every step.
    await both(
      (s) => s.jobGetMany({ ids }),
      (jobs) => jobs.map(comparable),
    );
    await both((s) => s.jobPeekMany({ queue, limit: 1000, now }), byId);
    await both((s) => s.queueStats({ name: queue, now }));
    for (let partition = 0; partition < partitions; partition++)
      await both((s) => s.jobNextDueAt({ queue, partition }));
    if (o.workflows) await workflows.compare(both, now);
  }
  await both(
    (s) => s.jobScan({ queue, filter: {}, limit: 1000, now }),
    (jobs) => jobs.map(comparable),
  );
}
