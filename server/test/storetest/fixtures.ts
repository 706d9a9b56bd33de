/** Helpers for the shared store suite: build jobs, take leases, hand jobs out. */
import { expect } from "vitest";
import { newJobId } from "../../src/domain/job-id.js";
import type { JobRecord, NewJob } from "../../src/domain/job-record.js";
import { type QueueConfigInput, resolveQueueConfig } from "../../src/domain/queue-config.js";
import type { Store } from "../../src/store/store.js";

export const T0 = Date.UTC(2030, 0, 1);
export const OWNER = "broker-a";

let queueCounter = 0;

/** A fresh queue per test, so tests can share one store. */
export async function createQueue(store: Store, config: QueueConfigInput = {}, now = T0): Promise<string> {
  const name = `q${process.pid}_${++queueCounter}`;
  await store.queueCreate({ name, config: resolveQueueConfig(config), now });
  return name;
}

export function newJob(queue: string, over: Partial<NewJob> = {}, now = T0): NewJob {
  const partition = over.partition ?? 0;
  return {
    id: newJobId(queue, partition, now),
    queue,
    partition,
    priority: 1,
    body: new Uint8Array([1, 2, 3]),
    runAfter: now,
    attemptsAllowed: 3,
    customStatus: "",
    createdAt: now,
    idempotencyKey: "",
    orderingKey: "",
    ...over,
  };
}

export async function insert(store: Store, queue: string, overs: Array<Partial<NewJob>>, now = T0): Promise<string[]> {
  return store.jobInsertMany({ jobs: overs.map((o) => newJob(queue, o, now)), now });
}

export async function lease(store: Store, queue: string, partition = 0, now = T0, owner = OWNER): Promise<number> {
  const l = await store.leaseAcquire({ queue, partition, owner, ttlMs: 60_000, now });
  if (!l) throw new Error("lease not granted");
  return l.epoch;
}

export interface HandOutOptions {
  partition?: number;
  limit?: number;
  now?: number;
  claimMs?: number;
  retryDelayMs?: number;
}

/** Claims and starts due jobs the way the broker does; returns the running jobs. */
export async function handOut(store: Store, queue: string, o: HandOutOptions = {}): Promise<JobRecord[]> {
  const partition = o.partition ?? 0;
  const now = o.now ?? T0;
  const epoch = await lease(store, queue, partition, now);
  const claimed = await store.jobClaimMany({ queue, partition, epoch, limit: o.limit ?? 100, now });
  const started = await store.jobStartMany({
    queue,
    partition,
    epoch,
    plans: claimed.map((j) => ({
      id: j.id,
      claimToken: `tok-${j.id}-${j.attempt + 1}`,
      claimExpiresAt: now + (o.claimMs ?? 30_000),
      retryDelayMs: o.retryDelayMs ?? 1000,
    })),
    now,
  });
  expect(started).toEqual(claimed.map((j) => j.id));
  return (await store.jobGetMany({ ids: started })).map((j) => j!);
}

export async function get(store: Store, id: string): Promise<JobRecord | undefined> {
  return (await store.jobGetMany({ ids: [id] }))[0];
}
