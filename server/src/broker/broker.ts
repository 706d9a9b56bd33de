/**
 * The broker: owns queue partitions through leases with epochs, prefetches due jobs in
 * batches into bounded in-memory buffers, and serves Dequeue from memory (Pacer).
 *
 * - A buffer is refilled with one batched claim when it runs low, when a job is
 *   announced due (enqueue, retry, timer on the next run_after), or when a better
 *   priority than the buffered ones arrives (the worse ones are released first).
 * - Long-poll waiters are woken by refills and announcements, never by a fixed tick.
 * - The rate limit is charged per job handed out.
 * - Handing out writes RUNNING, the claim token and the expiry in one batched, epoch-
 *   fenced store call; only then are jobs returned.
 * - In a cluster (docs/cluster.md) it serves only the partitions `ownership` assigns to
 *   it, gives up those it no longer should own (rebalance), and charges each queue's rate
 *   limit in proportion to the share of partitions it owns.
 */
import type { Logger } from "pino";
import { byteBudget } from "../domain/byte-budget.js";
import type { Clock } from "../domain/clock.js";
import { queueNotFound } from "../domain/errors.js";
import { newClaimToken } from "../domain/job-id.js";
import { compareForDequeue, type JobRecord } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import type { QueueConfig } from "../domain/queue-config.js";
import { retryDelayMs } from "../domain/retry-policy.js";
import { type HandOutPlan, handOut } from "../domain/transitions.js";
import type { Store } from "../store/store.js";
import { BufferMemory } from "./buffer-memory.js";
import { PartitionBuffer } from "./partition-buffer.js";
import { PartitionLeases } from "./partition-leases.js";
import type { QueueState } from "./queue-state.js";
import { RateLimiter } from "./rate-limiter.js";
import { Refills } from "./refills.js";
import { Waiters } from "./waiters.js";

export interface BrokerOptions {
  store: Store;
  clock: Clock;
  log: Logger;
  /** This broker's identity in leases. */
  owner: string;
  /** Jobs buffered per partition. */
  bufferSize: number;
  /**
   * Body bytes buffered per partition: a refill claims no more than fits (but at least one
   * job, whatever its size), and none while the buffer holds this much. Default: no bound.
   */
  bufferBytes?: number;
  /**
   * Body bytes buffered across every partition this broker owns: a refill claims no more
   * than the room left (one job when its partition's buffer is empty, so every partition is
   * still served). Bounds the broker's memory whatever the number of partitions it owns.
   * Default: no bound.
   */
  bufferBytesTotal?: number;
  leaseTtlMs: number;
  /** Which partitions this broker should own; default all of them (one broker). */
  ownership?: Ownership;
  /**
   * In a cluster, a notification from another node can be lost (a stale view of who owns
   * what, a dropped connection). With this set, a partition found empty is checked again
   * after this long while workers wait on it, so such jobs wait at most this long.
   * Unset (one node): notifications are in-process and never lost; empty means empty.
   */
  recheckEmptyMs?: number;
}

export interface Ownership {
  /** Whether this broker should own `partition` of `queue`, which has `partitions` in all. */
  owns(queue: string, partition: number, partitions: number): boolean;
}

const everything: Ownership = { owns: () => true };

export interface DequeueParams {
  queue: string;
  limit: number;
  waitMs: number;
  signal?: AbortSignal;
}

export class Broker {
  private readonly queues = new Map<string, Promise<QueueState>>();
  private cancelRenewal: (() => void) | undefined;
  private stopped = false;
  private readonly ownership: Ownership;
  private readonly memory: BufferMemory;
  private readonly leases: PartitionLeases;
  private readonly refills: Refills;
  /** Claim queries made and those that came back empty (docs/benchmarks.md reports the share). */
  get claimStats(): { queries: number; empty: number } {
    return this.refills.claimStats;
  }

  constructor(private readonly o: BrokerOptions) {
    this.ownership = o.ownership ?? everything;
    this.memory = new BufferMemory(o.bufferBytesTotal);
    this.leases = new PartitionLeases({
      ...o,
      owns: (q, b) => this.owns(q, b),
      stopped: () => this.stopped,
      retry: (q, b) => this.refills.markDue(q, b, 0, true),
    });
    this.refills = new Refills({ ...o, memory: this.memory, leases: this.leases, owns: (q, b) => this.owns(q, b) });
  }

  start(): void {
    const renew = () => {
      void Promise.all([this.renewLeases(), this.reloadConfigs()]).finally(() => {
        if (!this.stopped) this.cancelRenewal = this.o.clock.setTimer(this.o.leaseTtlMs / 3, renew);
      });
    };
    this.cancelRenewal = this.o.clock.setTimer(this.o.leaseTtlMs / 3, renew);
  }

  /** Hands out up to `limit` jobs, waiting up to `waitMs` for one to become due. */
  async dequeue(p: DequeueParams): Promise<JobRecord[]> {
    const deadline = this.o.clock.now() + p.waitMs;
    let woken = false;
    for (;;) {
      const q = await this.queue(p.queue);
      let waitCap = Number.POSITIVE_INFINITY;
      if (!q.config.paused && !this.stopped) {
        const now = this.o.clock.now();
        const granted = q.limiter.take(p.limit, now);
        if (granted > 0) {
          const announced = q.announced;
          const jobs = await this.take(p.queue, q, granted, !woken);
          q.limiter.refund(granted - jobs.length);
          if (jobs.length > 0) return jobs;
          // A job announced while take() ran found no waiter to wake (we were not waiting
          // yet) and may have missed the refill take() decided on: look again first.
          if (q.announced !== announced) continue;
        } else {
          waitCap = q.limiter.msUntilNext(now);
        }
        if (this.o.recheckEmptyMs !== undefined) waitCap = Math.min(waitCap, this.o.recheckEmptyMs);
      }
      const left = deadline - this.o.clock.now();
      if (left <= 0 || p.signal?.aborted || this.stopped) return [];
      await q.waiters.wait(Math.min(left, waitCap), p.signal, (ms, fn) => this.o.clock.setTimer(ms, fn));
      woken = true;
    }
  }

  /**
   * A job of `queue`/`partition` is (or will be, at `dueAt`) pending: wake waiters, or
   * set a timer for when it becomes due. `priority` undefined means unknown.
   */
  notify(queue: string, partition: number, dueAt: number, priority?: number): void {
    const state = this.queues.get(queue);
    if (!state) return; // Nobody has dequeued here yet: the first Dequeue claims from the store.
    void state.then(
      (q) => {
        const buffer = q.partitions[partition];
        if (!buffer) return;
        if (dueAt <= this.o.clock.now()) this.refills.markDue(q, buffer, priority ?? 0);
        else this.refills.armDueTimer(q, buffer, dueAt);
      },
      () => {},
    );
  }

  /** The queue's config changed (rate limit, pause, ...): apply it at once. */
  onQueueUpdated(name: string, config: QueueConfig): void {
    void this.queues.get(name)?.then(
      (q) => {
        q.config = config;
        const grew = q.partitions.length < config.partitions;
        // Partitions only grow: the new ones start empty and unowned, claimed on demand.
        while (q.partitions.length < config.partitions)
          q.partitions.push(new PartitionBuffer(name, q.partitions.length, this.memory));
        // More partitions can move old ones between brokers (the per-broker bound changed).
        if (grew) return this.rebalanceQueue(q);
        this.applyRate(q);
        q.waiters.wakeAll();
      },
      () => {},
    );
  }

  /** A queue was changed through another node: read its config again. */
  async reloadQueue(name: string): Promise<void> {
    const state = this.queues.get(name);
    if (!state) return;
    const record = await this.o.store.queueGet({ name });
    // The queue may have been deleted and created again meanwhile: never act on the new
    // one with what was read about the old one.
    if (this.queues.get(name) !== state) return;
    if (record) this.onQueueUpdated(name, record.config);
    else this.onQueueDeleted(name);
  }

  /**
   * The set of partitions this broker should own changed: release the ones it lost
   * (buffered jobs back to pending, lease given up, so the new owner starts at once)
   * and wake waiters so the ones it gained are claimed.
   */
  rebalance(): void {
    for (const state of this.queues.values())
      void state.then(
        (q) => this.rebalanceQueue(q),
        () => {},
      );
  }

  private async rebalanceQueue(q: QueueState): Promise<void> {
    this.applyRate(q);
    for (const b of q.partitions) {
      if (this.owns(q, b)) {
        if (b.epoch === undefined) this.refills.markDue(q, b, 0);
      } else if (b.epoch !== undefined) {
        await this.leases
          .giveUp(b)
          .catch((err) =>
            this.o.log.warn({ err, queue: q.name, partition: b.partition }, "could not release partition"),
          );
      }
    }
    q.waiters.wakeAll();
  }

  onQueueDeleted(name: string): void {
    const state = this.queues.get(name);
    this.queues.delete(name);
    void state?.then(
      async (q) => {
        q.retired = true;
        q.waiters.wakeAll();
        for (const b of q.partitions) {
          b.cancelDueTimer?.();
          b.cancelLeaseRetry?.();
          // Nothing to release if the queue is really gone; if a stale notice retired a
          // queue that still exists, its buffered jobs must not stay BUFFERED.
          await this.leases
            .release(b, b.drain())
            .catch((err) => this.o.log.warn({ err, queue: name }, "release failed"));
        }
      },
      () => {},
    );
  }

  /** Stops serving: releases every buffered job back to pending and gives up leases. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelRenewal?.();
    const states = await Promise.allSettled([...this.queues.values()]);
    for (const s of states) {
      if (s.status !== "fulfilled") continue;
      s.value.waiters.wakeAll();
      for (const buffer of s.value.partitions) {
        buffer.cancelDueTimer?.();
        buffer.cancelLeaseRetry?.();
        await this.leases.giveUp(buffer);
      }
    }
    this.queues.clear();
  }

  /** Whether this broker should own any partition of `queue` (loading the queue if needed). */
  async ownsAnyOf(queue: string): Promise<boolean> {
    const q = await this.queue(queue);
    return q.partitions.some((b) => this.owns(q, b));
  }

  /** Body bytes in all of this broker's buffers (bounded by bufferBytesTotal), for metrics and tests. */
  bufferedBytes(): number {
    return this.memory.held;
  }

  /** Jobs in all of this broker's buffers, for metrics. */
  bufferedJobs(): number {
    return this.memory.jobs;
  }

  /** Buffered jobs per queue, for stats and tests. */
  bufferedCount(queue: string): Promise<number> {
    const state = this.queues.get(queue);
    return state ? state.then((q) => q.partitions.reduce((n, b) => n + b.size, 0)) : Promise.resolve(0);
  }

  /** The partition leases this broker holds now, with their epochs (for ClusterInfoService). */
  async heldLeases(): Promise<Array<{ queue: string; partition: number; epoch: number; expiresAt: number }>> {
    const held: Array<{ queue: string; partition: number; epoch: number; expiresAt: number }> = [];
    for (const state of this.queues.values()) {
      const q = await state.catch(() => undefined);
      if (!q || q.retired) continue;
      for (const b of q.partitions)
        if (b.epoch !== undefined)
          held.push({ queue: b.queue, partition: b.partition, epoch: b.epoch, expiresAt: b.leaseExpiresAt });
    }
    return held;
  }

  // ---- internals

  private queue(name: string): Promise<QueueState> {
    let state = this.queues.get(name);
    if (!state) {
      state = this.load(name);
      this.queues.set(name, state);
      state.catch(() => this.queues.delete(name));
    }
    return state;
  }

  private async load(name: string): Promise<QueueState> {
    const record = await this.o.store.queueGet({ name });
    if (!record) throw queueNotFound(name);
    const config = record.config;
    const q: QueueState = {
      name,
      config,
      partitions: Array.from({ length: config.partitions }, (_, i) => new PartitionBuffer(name, i, this.memory)),
      limiter: new RateLimiter(0, this.o.clock.now()),
      waiters: new Waiters(),
      announced: 0,
      retired: false,
    };
    this.applyRate(q);
    return q;
  }

  private owns(q: QueueState, b: PartitionBuffer): boolean {
    return this.ownership.owns(q.name, b.partition, q.partitions.length);
  }

  /** Each broker hands out its share of the queue's rate: the share of partitions it owns. */
  private applyRate(q: QueueState): void {
    const rate = q.config.maxDequeuePerSecond;
    const owned = q.partitions.filter((b) => this.owns(q, b)).length;
    q.limiter.setRate(
      rate === 0 || owned === q.partitions.length ? rate : (rate * owned) / q.partitions.length,
      this.o.clock.now(),
    );
  }

  /**
   * Takes up to `count` jobs across the queue's partitions, best first, and starts them.
   * `fill`: claim more first when the buffers cannot fill the request (fewer, fuller
   * answers). A long poll woken by jobs arriving takes what is buffered without that
   * claim: one store round trip less between an enqueue and its hand-out (issue 28); the
   * refill after the hand-out brings the rest.
   */
  private async take(queue: string, q: QueueState, count: number, fill: boolean): Promise<JobRecord[]> {
    const picked = new Map<PartitionBuffer, JobRecord[]>();
    const owned = q.partitions.filter((b) => this.owns(q, b));
    // A queue of one partition whose buffer is empty: claim and hand out in one store call.
    const only = owned.length === 1 && q.partitions.length === 1 ? owned[0]! : undefined;
    if (only && only.size === 0 && only.epoch !== undefined) {
      const jobs = await this.refills.claimAndStart(q, only, (now) => ({
        claimToken: newClaimToken(),
        claimExpiresAt: now + q.config.claimTimeoutMs,
        retryDelayMs: retryDelayMs(q.config.retryPolicy, 1),
        max: Math.min(count, this.o.bufferSize),
        maxBytes: limits.dequeueBodyBytesMax,
      }));
      // Nothing handed out but a retry left in the buffer: the usual way below.
      if (jobs.length > 0 || only.size === 0) return jobs;
    }
    let total = 0;
    const fits = byteBudget(limits.dequeueBodyBytesMax);
    let full = false; // the answer holds all the body bytes it may
    // More than one round only when a request is larger than a buffer holds.
    for (let round = 0; round < (fill ? 16 : 1) && total < count && !full; round++) {
      const wanted = count - total;
      const buffered = owned.some((b) => b.size > 0);
      await Promise.all(
        owned.map((b) => {
          // Refill first when this partition alone cannot fill the request and the store may have more,
          // or when a better priority than the buffered ones was announced.
          const needsJobs = (fill || !buffered) && b.size < wanted && !this.refills.knownEmpty(b);
          const betterArrived =
            b.dirtyPriority < b.worstPriority() || (b.size === 0 && b.dirtyPriority !== Number.POSITIVE_INFINITY);
          return needsJobs || betterArrived ? this.refills.refillCurrent(q, b) : undefined;
        }),
      );
      const before = total;
      while (total < count) {
        let best: PartitionBuffer | undefined;
        for (const b of owned) {
          const head = b.peek();
          if (head && (!best || compareForDequeue(head, best.peek()!) < 0)) best = b;
        }
        if (!best) break;
        if (!fits(best.peek()!.body.length)) {
          full = true;
          break;
        }
        const list = picked.get(best) ?? [];
        list.push(best.shift()!);
        picked.set(best, list);
        total++;
      }
      if (total === before) break;
    }
    for (const b of owned) {
      if (b.size < this.o.bufferSize / 4 && !this.refills.knownEmpty(b))
        void this.refills.refill(q, b).catch((err) => this.o.log.warn({ err, queue }, "refill failed"));
    }
    const started = await Promise.all([...picked].map(([b, jobs]) => this.startJobs(q, b, jobs)));
    return started.flat().sort(compareForDequeue);
  }

  private async startJobs(q: QueueState, buffer: PartitionBuffer, jobs: JobRecord[]): Promise<JobRecord[]> {
    const now = this.o.clock.now();
    const claimToken = newClaimToken();
    const plans: HandOutPlan[] = jobs.map((job) => ({
      id: job.id,
      claimToken,
      claimExpiresAt: now + q.config.claimTimeoutMs,
      retryDelayMs: retryDelayMs(q.config.retryPolicy, job.attempt + 1),
    }));
    if (buffer.epoch === undefined) return [];
    const started = new Set(
      await this.o.store.jobStartMany({
        queue: buffer.queue,
        partition: buffer.partition,
        epoch: buffer.epoch,
        plans,
        now,
      }),
    );
    if (started.size < plans.length) {
      // The store refused to start some: their epoch is no longer the lease's (a newer
      // owner took the partition while we were paused or cut off) or they were deleted.
      // Check the lease before handing out anything else from this buffer.
      this.o.log.warn(
        { queue: buffer.queue, partition: buffer.partition, epoch: buffer.epoch, refused: plans.length - started.size },
        "hand-out refused by the store",
      );
      buffer.leaseExpiresAt = 0;
    }
    // The store applied handOut; apply the same transition to our copies for the reply.
    return jobs.flatMap((job, i) => (started.has(job.id) ? [{ ...job, ...handOut(job, plans[i]!, now) }] : []));
  }

  private async renewLeases(): Promise<void> {
    for (const state of [...this.queues.values()]) {
      const q = await state.catch(() => undefined);
      if (!q) continue;
      // A queue's partitions renew together: hundreds of them one after another could
      // take longer than the lease has left on a slow store.
      await Promise.all(
        q.partitions.map((b) => {
          if (b.epoch === undefined) return undefined;
          const renewing = this.owns(q, b) ? this.leases.ensure(q, b, this.o.clock.now()) : this.leases.giveUp(b);
          return renewing.catch((err) =>
            this.o.log.warn({ err, queue: b.queue, partition: b.partition }, "lease renewal failed"),
          );
        }),
      );
    }
  }

  /** Picks up config changes made through other nodes (a notification may have been lost). */
  private async reloadConfigs(): Promise<void> {
    for (const name of [...this.queues.keys()]) {
      await this.reloadQueue(name).catch((err) => this.o.log.warn({ err, queue: name }, "queue reload failed"));
    }
  }
}
