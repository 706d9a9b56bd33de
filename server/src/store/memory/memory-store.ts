/**
 * The embedded default store: everything in this process's memory, lost on exit. It is
 * a real store, not a mock: it passes the same shared suite as Redis and MySQL.
 *
 * Indexes (all lazily cleaned: an index entry carries the job's generation and is
 * skipped once the job has changed since):
 * - per partition and priority, an OrderedIndex of pending jobs by (run_after, seq): O(1)
 *   for jobs enqueued in order, O(log n) for scheduled or retried ones; never a scan;
 * - one OrderedIndex of running claims by expiry, so the claim-timeout sweep costs O(expired);
 * - per queue, finished jobs in finishing order, so retention GC costs O(deleted);
 * - per partition and ordering key, the jobs that have not ended, in enqueue order
 *   (KeySequences): O(1) to join and to find the next head when one ends. Waiting jobs
 *   are in no pending heap, so claims and peeks never see them.
 * Scan, count and stats iterate the queue's jobs: admin calls, O(jobs in the queue).
 *
 * The class only makes the store's MemoryState (memory-state.ts, over the data of
 * queue-data.ts): each Store method hands it to a module function (../delegating-store.ts),
 * one module per concern: broker-registry.ts, leases.ts, queue-admin.ts, insert-jobs.ts
 * (enqueue), hand-out.ts (claim, start, release), running-writes.ts (ACK, checkpoint, claim
 * expiry), bulk-admin.ts (GC, delete, retry) and job-reads.ts.
 */
import { DelegatingStore, type StoreFunctions } from "../delegating-store.js";
import * as brokers from "./broker-registry.js";
import * as bulk from "./bulk-admin.js";
import * as handOut from "./hand-out.js";
import * as insert from "./insert-jobs.js";
import * as reads from "./job-reads.js";
import * as leases from "./leases.js";
import { MemoryState } from "./memory-state.js";
import * as queues from "./queue-admin.js";
import * as running from "./running-writes.js";
import { MemorySchedules } from "./schedules.js";
import * as tokens from "./tokens.js";
import { MemoryWorkflows } from "./workflows.js";

/** Each Store method's module function (../delegating-store.ts hands it the context). */
const functions: StoreFunctions<MemoryState> = {
  ...brokers,
  ...bulk,
  ...handOut,
  ...insert,
  ...leases,
  ...queues,
  ...reads,
  ...running,
  ...tokens,
};

export class MemoryStore extends DelegatingStore<MemoryState> {
  readonly name = "memory";
  readonly defaultBufferSize = 1000;
  /** The jobs, queues, leases and brokers, shared by the modules this class delegates to. */
  protected readonly ctx = new MemoryState();
  readonly workflows = new MemoryWorkflows(this.ctx);
  readonly schedules = new MemorySchedules(this.ctx, this.workflows);

  constructor() {
    super(functions);
  }

  async close(): Promise<void> {}
}
