import { compareForDequeue, type JobRecord } from "../domain/job-record.js";
import type { BufferMemory } from "./buffer-memory.js";

/**
 * The in-memory prefetch buffer of one owned partition: jobs claimed from the store as
 * BUFFERED under the lease epoch, kept in dequeue order, handed out from the front.
 */
export class PartitionBuffer {
  /** Lease epoch the buffered jobs were claimed under; undefined while not owned. */
  epoch: number | undefined;
  leaseExpiresAt = 0;
  /** The store had no more due jobs at the last refill (until notified otherwise). */
  exhausted = false;
  /** When `exhausted` was last decided. */
  exhaustedAt = 0;
  /** Best priority of jobs announced as due since the last refill (Infinity: none). */
  dirtyPriority = Number.POSITIVE_INFINITY;
  refilling: Promise<void> | undefined;
  cancelDueTimer: (() => void) | undefined;
  dueTimerAt = Number.POSITIVE_INFINITY;
  /** Lease acquire/renew/release of this partition, one at a time (Broker.leaseOp). */
  leaseOps: Promise<void> = Promise.resolve();
  /** Set while waiting to try the lease again (another broker still held it). */
  cancelLeaseRetry: (() => void) | undefined;
  private jobs: JobRecord[] = [];
  private head = 0;
  /** Body bytes of the jobs held (the buffer's memory bound counts these). */
  private heldBytes = 0;

  constructor(
    readonly queue: string,
    readonly partition: number,
    /** The broker's count of body bytes across its buffers, kept in step with this one's. */
    private readonly memory?: BufferMemory,
  ) {}

  get size(): number {
    return this.jobs.length - this.head;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  peek(): JobRecord | undefined {
    return this.jobs[this.head];
  }

  shift(): JobRecord | undefined {
    const job = this.jobs[this.head];
    if (job) {
      this.head++;
      this.count(-job.body.length, -1);
    }
    return job;
  }

  /** Priority of the worst job buffered (Infinity when empty). */
  worstPriority(): number {
    return this.size === 0 ? Number.POSITIVE_INFINITY : this.jobs[this.jobs.length - 1]!.priority;
  }

  /** Adds jobs in dequeue order (as a claim returns them): a linear merge, no re-sort. */
  add(claimed: JobRecord[]): void {
    if (claimed.length === 0) return;
    for (const job of claimed) this.count(job.body.length, 1);
    const held = this.jobs;
    const merged: JobRecord[] = [];
    let i = this.head;
    let k = 0;
    while (i < held.length && k < claimed.length)
      merged.push(compareForDequeue(held[i]!, claimed[k]!) <= 0 ? held[i++]! : claimed[k++]!);
    while (i < held.length) merged.push(held[i++]!);
    while (k < claimed.length) merged.push(claimed[k++]!);
    this.jobs = merged;
    this.head = 0;
  }

  /** Removes and returns the buffered jobs of a priority worse than `priority`. */
  removeWorseThan(priority: number): JobRecord[] {
    const keep = this.jobs.slice(this.head).filter((j) => j.priority <= priority);
    const removed = this.jobs.slice(this.head).filter((j) => j.priority > priority);
    this.jobs = keep;
    this.head = 0;
    for (const job of removed) this.count(-job.body.length, -1);
    return removed;
  }

  /** Empties the buffer, returning what it held. */
  drain(): JobRecord[] {
    const all = this.jobs.slice(this.head);
    this.jobs = [];
    this.head = 0;
    this.count(-this.heldBytes, -all.length);
    return all;
  }

  /** Every change of what is held goes through here, so the broker's totals stay in step. */
  private count(bytes: number, jobs: number): void {
    this.heldBytes += bytes;
    if (this.memory) {
      this.memory.held += bytes;
      this.memory.jobs += jobs;
    }
  }
}
