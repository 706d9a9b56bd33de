/** An engine on the memory store with a manual clock: no HTTP, no sleeps. */
import { Broker } from "../../src/broker/broker.js";
import { ManualClock, settle } from "../../src/domain/clock.js";
import type { QueueConfigInput } from "../../src/domain/queue-config.js";
import { Engine } from "../../src/engine/engine.js";
import type { JobSpecInput } from "../../src/engine/inputs.js";
import { type Logger, silentLogger } from "../../src/log.js";
import { Maintenance } from "../../src/maintenance/maintenance.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

let counter = 0;

export async function setup(
  o: {
    bufferSize?: number;
    bufferBytes?: number;
    bufferBytesTotal?: number;
    queue?: QueueConfigInput;
    store?: MemoryStore;
    log?: Logger;
  } = {},
) {
  const clock = new ManualClock();
  const store = o.store ?? new MemoryStore();
  const log = o.log ?? silentLogger;
  const broker = new Broker({
    store,
    clock,
    log,
    owner: "test-broker",
    bufferSize: o.bufferSize ?? 100,
    bufferBytes: o.bufferBytes,
    bufferBytesTotal: o.bufferBytesTotal,
    leaseTtlMs: 30_000,
  });
  const engine = new Engine({ store, broker, clock });
  const maintenance = new Maintenance({
    store,
    engine,
    clock,
    log: silentLogger,
    sweepIntervalMs: 1000,
    gcIntervalMs: 60_000,
    chunk: 100,
  });
  broker.start();
  maintenance.start();
  const queue = `q${++counter}`;
  await engine.createQueue(queue, o.queue ?? {});
  const spec = (over: Partial<JobSpecInput> = {}): JobSpecInput => ({
    queue,
    body: new TextEncoder().encode(over.customStatus ?? "job"),
    priority: 0,
    attemptsAllowed: 0,
    idempotencyKey: "",
    customStatus: "",
    ...over,
  });
  const enqueue = (...overs: Array<Partial<JobSpecInput>>) => engine.enqueue(overs.map(spec));
  const dequeue = async (limit = 10, waitMs = 0, signal?: AbortSignal) =>
    (await engine.dequeue({ queue, limit, waitMs, signal, dryRun: false })).jobs;
  const ok = (job: { id: string; claimToken: string }, customStatus = "") =>
    engine.ack({ queue, succeeded: [{ jobId: job.id, claimToken: job.claimToken, customStatus }], failed: [] });
  const fail = (job: { id: string; claimToken: string }, retryDelayMs?: number, noRetry = false) =>
    engine.ack({
      queue,
      succeeded: [],
      failed: [{ jobId: job.id, claimToken: job.claimToken, customStatus: "", retryDelayMs, noRetry }],
    });
  const job = async (id: string) => (await engine.getJobs([id]))[0];
  /** Resolves a promise's state without waiting for it. */
  const isSettled = async (p: Promise<unknown>) => {
    let done = false;
    void p.then(
      () => (done = true),
      () => (done = true),
    );
    await settle();
    return done;
  };
  return { clock, store, broker, engine, maintenance, queue, spec, enqueue, dequeue, ok, fail, job, isSettled };
}
