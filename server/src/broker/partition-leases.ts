/**
 * A broker's partition leases (Pacer's ownership): acquiring and renewing them, giving
 * them up, and returning buffered jobs to pending under the epoch they were claimed with.
 * Invariant 4 lives here: a new owner (a higher epoch) first returns every job buffered
 * under an older epoch, charging nothing.
 */
import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import type { JobRecord } from "../domain/job-record.js";
import type { Store } from "../store/store.js";
import type { PartitionBuffer } from "./partition-buffer.js";
import type { QueueState } from "./queue-state.js";

export interface LeaseContext {
  store: Store;
  clock: Clock;
  log: Logger;
  /** This broker's identity in leases. */
  owner: string;
  leaseTtlMs: number;
  /** Whether this broker is assigned `b` (cluster ownership). */
  owns(q: QueueState, b: PartitionBuffer): boolean;
  stopped(): boolean;
  /** A lease another broker held may be free by now: try the partition again. */
  retry(q: QueueState, b: PartitionBuffer): void;
}

export class PartitionLeases {
  constructor(private readonly o: LeaseContext) {}

  /** Makes sure this broker holds the partition's lease; a new epoch resets old buffers. */
  ensure(q: QueueState, b: PartitionBuffer, now: number): Promise<boolean> {
    if (b.epoch !== undefined && !this.renewalDue(b, now)) return Promise.resolve(true);
    return this.leaseOp(b, () => this.acquire(q, b));
  }

  /** Lets go of a partition this broker should no longer own (or at stop). */
  async giveUp(b: PartitionBuffer): Promise<void> {
    await b.refilling?.catch(() => {});
    await this.leaseOp(b, () => this.letGo(b));
  }

  /** Returns buffered jobs to pending, fenced by the epoch they were claimed under. */
  async release(b: PartitionBuffer, jobs: JobRecord[]): Promise<void> {
    if (jobs.length === 0 || b.epoch === undefined) return;
    await this.o.store.jobReleaseBuffered({
      queue: b.queue,
      partition: b.partition,
      epoch: b.epoch,
      ids: jobs.map((j) => j.id),
    });
  }

  /**
   * Renew once a third of the lease has passed. The renewal timer ticks every third, so
   * a tick always finds the lease with between a third and two thirds left: a renewal
   * is never the last moment before expiry, even when the store is slow to answer.
   */
  private renewalDue(b: PartitionBuffer, now: number): boolean {
    return b.leaseExpiresAt - now <= (2 * this.o.leaseTtlMs) / 3;
  }

  /**
   * Lease changes of one partition run one at a time: a renewal racing a release could
   * otherwise land after it (on another store connection) and take a fresh epoch for a
   * partition this broker no longer serves, keeping everyone else out.
   */
  private leaseOp<T>(b: PartitionBuffer, op: () => Promise<T>): Promise<T> {
    const run = b.leaseOps.then(op, op);
    b.leaseOps = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  private async acquire(q: QueueState, b: PartitionBuffer): Promise<boolean> {
    const now = this.o.clock.now();
    if (b.epoch !== undefined && !this.renewalDue(b, now)) return true; // renewed while we queued
    const wanted = () => this.o.owns(q, b) && !q.retired && !this.o.stopped();
    if (!wanted()) return false;
    const lease = await this.o.store.leaseAcquire({
      queue: b.queue,
      partition: b.partition,
      owner: this.o.owner,
      ttlMs: this.o.leaseTtlMs,
      now,
    });
    if (!lease || (b.epoch !== undefined && lease.epoch !== b.epoch)) {
      // Someone else holds it, or held it since our last renewal: what we buffered under
      // the old epoch is theirs to release; our late writes are refused by the fence.
      if (b.epoch !== undefined)
        this.o.log.warn({ queue: b.queue, partition: b.partition, epoch: b.epoch }, "lease lost");
      b.epoch = undefined;
      b.drain();
    }
    if (!lease) {
      // The previous owner has not let go yet (it has not seen the new assignment, or it
      // died and its lease has not expired): try again soon.
      this.armRetry(q, b);
      return false;
    }
    if (!wanted()) {
      // The assignment moved while we asked: let go at once rather than keep others out.
      // (Any buffered jobs are ours under this very epoch: a different one was drained above.)
      b.epoch = lease.epoch;
      await this.letGo(b);
      return false;
    }
    if (lease.epoch !== b.epoch) {
      // Invariant 4: a new owner first returns what older epochs buffered, charging nothing.
      // A fresh buffer holds nothing, so jobs buffered under our own epoch are orphans too
      // (an earlier buffer of this partition in this process was dropped): return them.
      const belowEpoch = b.epoch === undefined ? lease.epoch + 1 : lease.epoch;
      const released = await this.o.store.jobReleaseBuffered({ queue: b.queue, partition: b.partition, belowEpoch });
      this.o.log.info({ queue: b.queue, partition: b.partition, epoch: lease.epoch, released }, "partition acquired");
    }
    b.epoch = lease.epoch;
    b.leaseExpiresAt = lease.expiresAt;
    return true;
  }

  private armRetry(q: QueueState, b: PartitionBuffer): void {
    if (b.cancelLeaseRetry || this.o.stopped()) return;
    b.cancelLeaseRetry = this.o.clock.setTimer(Math.min(1000, this.o.leaseTtlMs / 4), () => {
      b.cancelLeaseRetry = undefined;
      if (this.o.owns(q, b)) this.o.retry(q, b);
    });
  }

  /** Inside a lease op: buffered jobs back to pending first (that release is fenced by the lease), then the lease. */
  private async letGo(b: PartitionBuffer): Promise<void> {
    const epoch = b.epoch;
    if (epoch === undefined) return;
    await this.release(b, b.drain());
    b.epoch = undefined;
    await this.o.store.leaseRelease({ queue: b.queue, partition: b.partition, owner: this.o.owner, epoch });
    this.o.log.info({ queue: b.queue, partition: b.partition, epoch }, "partition released");
  }
}
