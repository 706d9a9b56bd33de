/**
 * Keeping a partition's buffer filled: one batched claim at a time (a request that joins
 * a claim started before a better job was announced claims once more), bounded in jobs
 * and in body bytes (the partition's and the broker's), timers for the next run_after,
 * and the announcements that wake waiters. Claims happen only under the partition's lease.
 */
import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import type { JobRecord } from "../domain/job-record.js";
import type { ClaimStart, Store } from "../store/store.js";
import type { BufferMemory } from "./buffer-memory.js";
import type { PartitionBuffer } from "./partition-buffer.js";
import type { PartitionLeases } from "./partition-leases.js";
import type { QueueState } from "./queue-state.js";

export interface RefillContext {
  store: Store;
  clock: Clock;
  log: Logger;
  bufferSize: number;
  bufferBytes?: number;
  recheckEmptyMs?: number;
  memory: BufferMemory;
  leases: PartitionLeases;
  owns(q: QueueState, b: PartitionBuffer): boolean;
}

export class Refills {
  /** Claim queries made and those that came back empty (docs/benchmarks.md reports the share). */
  readonly claimStats = { queries: 0, empty: 0 };

  constructor(private readonly o: RefillContext) {}

  /**
   * A refill whose claim began after everything announced so far. Joining a refill that
   * is already running is not enough when a job was announced while it ran (its claim
   * may have read the store before that job was there: a priority-1 job would then wait
   * behind the priority-2 and -3 jobs it read): claim once more.
   */
  async refillCurrent(q: QueueState, b: PartitionBuffer): Promise<void> {
    const joined = b.refilling !== undefined;
    await this.refill(q, b);
    if (joined && b.dirtyPriority !== Number.POSITIVE_INFINITY) await this.refill(q, b);
  }

  refill(q: QueueState, b: PartitionBuffer): Promise<void> {
    if (!b.refilling) {
      b.refilling = this.doRefill(q, b).finally(() => {
        b.refilling = undefined;
      });
    }
    return b.refilling;
  }

  private async doRefill(q: QueueState, b: PartitionBuffer): Promise<void> {
    const now = this.o.clock.now();
    if (!this.o.owns(q, b)) return;
    if (!(await this.o.leases.ensure(q, b, now))) return;
    const dirty = b.dirtyPriority;
    b.dirtyPriority = Number.POSITIVE_INFINITY;
    const full =
      b.size >= this.o.bufferSize ||
      (this.o.bufferBytes !== undefined && b.bytes >= this.o.bufferBytes) ||
      this.o.memory.room() === 0;
    if (full && dirty < b.worstPriority()) {
      // Full (in jobs or in bytes, its own or the broker's) of worse jobs while better ones wait in the store: make room for them.
      await this.o.leases.release(b, b.removeWorseThan(dirty));
    }
    // A refill claims at most a quarter of the buffer at a time (more only when the buffer
    // is empty): one big claim would hold the event loop for milliseconds, and every
    // Dequeue waiting behind it would see that in its latency.
    const room = Math.min(
      this.o.bufferSize - b.size,
      b.size === 0 ? this.o.bufferSize : Math.max(1, Math.ceil(this.o.bufferSize / 4)),
    );
    if (room <= 0) return;
    // Bytes: the partition's own room and the broker's, reserved while the claim runs.
    const roomBytes = this.o.memory.reserve(
      this.o.bufferBytes === undefined ? undefined : Math.max(0, this.o.bufferBytes - b.bytes),
    );
    let claimed: JobRecord[];
    try {
      if (roomBytes === 0 && b.size > 0) return;
      claimed = await this.o.store.jobClaimMany({
        queue: b.queue,
        partition: b.partition,
        epoch: b.epoch!,
        limit: room,
        maxBytes: roomBytes,
        now,
      });
      if (!q.retired) b.add(claimed);
    } finally {
      this.o.memory.release(roomBytes);
    }
    this.noteClaim(b, claimed.length, room, roomBytes !== undefined, now);
    if (q.retired) {
      await this.o.leases.release(b, claimed);
      return;
    }
    // A job announced while the claim ran may have been inserted after it read: let the
    // waiters look again (their take() refills, seeing dirtyPriority set).
    if (claimed.length > 0 || b.dirtyPriority !== Number.POSITIVE_INFINITY) q.waiters.wakeAll();
    // Outside this refill: a job announced while the lookup runs then starts a refill of
    // its own at once. Awaited here, the announcement would join this refill, which claims
    // nothing more, and the job would wait for the next announcement (pickup latency, issue 28).
    if (b.exhausted) void this.armNextDue(q, b);
  }

  /**
   * A claim that hands out too (Store.jobClaimMany's `start`), for a take() that finds the
   * buffer empty: at most `plan.max` jobs, the ones handed out returned, any left (a retry
   * the claim may not hand out) buffered. One store call between an enqueue and its
   * hand-out instead of a claim and then a start (issue 28's pickup latency).
   * Not a refill others join: two streams' claims run side by side, each atomic in the
   * store, and take different jobs. (Serialized, the second waited for the first's round
   * trip and then claimed into the buffer: pickup p99 15–39 ms against 3–6.)
   */
  async claimAndStart(q: QueueState, b: PartitionBuffer, plan: (now: number) => ClaimStart): Promise<JobRecord[]> {
    const now = this.o.clock.now();
    const start = plan(now);
    const dirty = b.dirtyPriority;
    b.dirtyPriority = Number.POSITIVE_INFINITY;
    let claimed: JobRecord[];
    try {
      claimed = await this.o.store.jobClaimMany({
        queue: b.queue,
        partition: b.partition,
        epoch: b.epoch!,
        limit: start.max,
        // What it does not hand out (retries) is buffered: the answer's bound bounds that too.
        maxBytes: start.maxBytes,
        now,
        start,
      });
    } catch (err) {
      b.dirtyPriority = Math.min(b.dirtyPriority, dirty); // what was announced is still to be claimed
      throw err;
    }
    this.noteClaim(b, claimed.length, start.max, true, now);
    const started = claimed.filter((job) => job.state === "running");
    const left = started.length === claimed.length ? [] : claimed.filter((job) => job.state !== "running");
    if (q.retired) await this.o.leases.release(b, left);
    else if (left.length > 0) {
      b.add(left);
      q.waiters.wakeAll();
    }
    if (b.exhausted) void this.armNextDue(q, b);
    return started;
  }

  /** Counts a claim of `claimedCount` jobs out of `asked` and notes whether it drained the partition. */
  private noteClaim(b: PartitionBuffer, claimedCount: number, asked: number, byteBound: boolean, now: number): void {
    this.claimStats.queries++;
    if (claimedCount === 0) this.claimStats.empty++;
    // Fewer jobs than asked for means none are left, unless a byte bound cut the claim
    // short: then only an empty claim says so. A job announced while the claim ran
    // (dirtyPriority set again) may have been inserted after it read: not exhausted then.
    b.exhausted =
      claimedCount < asked && (!byteBound || claimedCount === 0) && b.dirtyPriority === Number.POSITIVE_INFINITY;
    b.exhaustedAt = now;
  }

  /** Sets the due timer at the partition's next run_after, if it has one. */
  private async armNextDue(q: QueueState, b: PartitionBuffer): Promise<void> {
    try {
      const next = await this.o.store.jobNextDueAt({ queue: b.queue, partition: b.partition });
      if (next !== undefined && !q.retired) this.armDueTimer(q, b, next);
    } catch (err) {
      this.o.log.warn({ err, queue: b.queue, partition: b.partition }, "next due time lookup failed");
    }
  }

  /** The store had nothing more for this partition at the last look, and that look is recent enough to trust. */
  knownEmpty(b: PartitionBuffer): boolean {
    if (!b.exhausted) return false;
    return this.o.recheckEmptyMs === undefined || this.o.clock.now() - b.exhaustedAt < this.o.recheckEmptyMs;
  }

  markDue(q: QueueState, b: PartitionBuffer, priority: number, evenWithoutWaiters = false): void {
    b.exhausted = false;
    b.dirtyPriority = Math.min(b.dirtyPriority, priority);
    q.announced++;
    // A queue of one partition: the waiters' take() claims and hands out in one store call
    // (claimAndStart), so wake them rather than claim into the buffer for them.
    if (q.waiters.size > 0 && q.partitions.length === 1 && b.epoch !== undefined && !evenWithoutWaiters) {
      q.waiters.wakeAll();
      return;
    }
    if (q.waiters.size > 0 || evenWithoutWaiters)
      void this.refill(q, b).catch((err) => this.o.log.warn({ err, queue: b.queue }, "refill failed"));
  }

  armDueTimer(q: QueueState, b: PartitionBuffer, at: number): void {
    if (at >= b.dueTimerAt) return;
    b.cancelDueTimer?.();
    b.dueTimerAt = at;
    b.cancelDueTimer = this.o.clock.setTimer(at - this.o.clock.now(), () => {
      b.dueTimerAt = Number.POSITIVE_INFINITY;
      b.cancelDueTimer = undefined;
      this.markDue(q, b, 0);
    });
  }
}
