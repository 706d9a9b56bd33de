/**
 * The SQLite store's buffered state, kept in the memory of the thread that owns the
 * database instead of in the jobs' rows (docs/sqlite.md, "The claim writes nothing"), as the
 * MySQL store does. A claimed job stays pending in its row and is held here, with the lease
 * epoch it was claimed under, until the broker starts it (one write: pending to running) or
 * releases it (no write at all). The claim and its release cost no write and no index
 * change, and a restart needs no clean-up: nothing held survives the process, so every job
 * it held is pending again.
 *
 * One process owns the file and every write goes through this thread, so what is held here
 * is exactly the row: a held job's row changes only when it is started (which stops holding
 * it) or deleted (which does too). Reads through the store show held jobs as buffered
 * (overlay), as the memory store does.
 */
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";

export interface Held {
  job: JobRecord;
  epoch: number;
}

export class HeldJobs {
  private readonly byId = new Map<string, Held>();
  /** Held jobs per "queue\u0000partition", by seq (what the claim's index-only read returns). */
  private readonly byPartition = new Map<string, Map<number, Held>>();
  /** Held since the batch began: a batch whose COMMIT fails answered their claims with an error. */
  private sinceBatch: string[] = [];

  /** Holds `job` (as its row has it: pending) under `epoch`; without its body, which the broker holds already. */
  hold(job: JobRecord, epoch: number): void {
    const held = { job: { ...job, body: NO_BODY }, epoch };
    this.sinceBatch.push(job.id);
    this.byId.set(job.id, held);
    const key = partitionKey(job.queue, job.partition);
    let jobs = this.byPartition.get(key);
    if (!jobs) this.byPartition.set(key, (jobs = new Map()));
    jobs.set(job.seq, held);
  }

  get(id: string): Held | undefined {
    return this.byId.get(id);
  }

  /** Stops holding `id` (started, released or deleted); false if it was not held. */
  drop(id: string): boolean {
    const held = this.byId.get(id);
    if (!held) return false;
    this.byId.delete(id);
    const key = partitionKey(held.job.queue, held.job.partition);
    const jobs = this.byPartition.get(key)!;
    jobs.delete(held.job.seq);
    if (jobs.size === 0) this.byPartition.delete(key);
    return true;
  }

  /** The batch committed: what it claimed stays held. */
  committed(): void {
    this.sinceBatch = [];
  }

  /** The batch's COMMIT failed: its claims were answered with an error, so the broker holds none of them. */
  rolledBack(): void {
    for (const id of this.sinceBatch) this.drop(id);
    this.sinceBatch = [];
  }

  /** The held jobs of a partition, by seq. */
  inPartition(queue: string, partition: number): ReadonlyMap<number, Held> {
    return this.byPartition.get(partitionKey(queue, partition)) ?? NONE;
  }

  /** Forgets every held job of a queue (it is being deleted). */
  dropQueue(queue: string): void {
    for (const held of [...this.byId.values()]) if (held.job.queue === queue) this.drop(held.job.id);
  }

  /** The record as users see it: a held job is buffered under its epoch. */
  overlay(job: JobRecord): JobRecord {
    const held = this.byId.get(job.id);
    return held && job.state === "pending" ? { ...job, ...transitions.claimIntoBuffer(held.epoch) } : job;
  }
}

const NONE: ReadonlyMap<number, Held> = new Map();
const NO_BODY = new Uint8Array();

function partitionKey(queue: string, partition: number): string {
  return `${queue}\u0000${partition}`;
}
