/**
 * Background upkeep, each part O(work to do), never O(queue):
 * - the claim-timeout sweep wakes at the earliest claim expiry (and at least every
 *   `sweepIntervalMs`), returns expired jobs to PENDING or FAILED and tells the broker;
 * - retention GC deletes finished jobs whose retention has passed, in bounded chunks.
 * In a cluster only one broker does this work at a time (`isLeader`): the sweeps are
 * safe to run anywhere (every write is conditional), but N brokers sweeping the same
 * expiries would only multiply the store's work.
 */
import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import { type JobCounters, tally } from "../engine/counters.js";
import type { Engine } from "../engine/engine.js";
import type { Store } from "../store/store.js";

export interface MaintenanceOptions {
  store: Store;
  engine: Engine;
  clock: Clock;
  log: Logger;
  sweepIntervalMs: number;
  gcIntervalMs: number;
  chunk: number;
  /** Whether this node does the periodic work now; default always (one node). */
  isLeader?: () => boolean;
  /** Where expired claims and collected jobs are counted (metrics); default: nowhere. */
  counters?: JobCounters;
}

export class Maintenance {
  private cancelSweep: (() => void) | undefined;
  private cancelGc: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** Periodic sweeps and GC rounds this node ran (tests: only the leader runs them). */
  readonly rounds = { sweeps: 0, gc: 0 };

  constructor(private readonly o: MaintenanceOptions) {}

  private leads(): boolean {
    return this.o.isLeader?.() ?? true;
  }

  start(): void {
    this.stopped = false;
    this.scheduleSweep(0);
    this.scheduleGc(this.o.gcIntervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelSweep?.();
    this.cancelGc?.();
    await this.running;
  }

  /** Expires every claim that has run out; returns how many. */
  async sweepClaims(): Promise<{ expired: number; nextExpiryAt?: number }> {
    let expired = 0;
    for (;;) {
      const result = await this.o.store.jobClaimExpire({ now: this.o.clock.now(), limit: this.o.chunk });
      expired += result.expired.length;
      this.o.engine.announcePending(result.expired);
      const byQueue = result.expired.reduce((counts, job) => tally(counts, job.queue), new Map<string, number>());
      for (const [queue, n] of byQueue) this.o.counters?.claimsExpired(queue, n);
      if (result.expired.length < this.o.chunk) {
        if (expired > 0) this.o.log.info({ expired }, "claims expired");
        return { expired, nextExpiryAt: result.nextExpiryAt };
      }
    }
  }

  /** Deletes finished jobs past their queue's retention; returns how many. */
  async collectGarbage(): Promise<number> {
    const now = this.o.clock.now();
    let deleted = 0;
    for (const queue of await this.o.store.queueList()) {
      const c = queue.config;
      for (;;) {
        const n = await this.o.store.jobDeleteFinished({
          queue: queue.name,
          // +1: a job is collected once its full retention has passed.
          succeededBefore: now - c.succeededRetentionMs + 1,
          failedBefore: now - c.failedRetentionMs + 1,
          limit: this.o.chunk,
        });
        deleted += n;
        if (n > 0) this.o.counters?.retentionDeleted(queue.name, n);
        if (n < this.o.chunk) break;
      }
    }
    if (deleted > 0) this.o.log.info({ deleted }, "retention gc");
    return deleted;
  }

  private scheduleSweep(ms: number): void {
    if (this.stopped) return;
    this.cancelSweep?.();
    this.cancelSweep = this.o.clock.setTimer(ms, () => {
      if (!this.leads()) return this.scheduleSweep(this.o.sweepIntervalMs);
      this.rounds.sweeps++;
      this.running = this.sweepClaims()
        .then(({ nextExpiryAt }) => {
          const untilNext = nextExpiryAt === undefined ? this.o.sweepIntervalMs : nextExpiryAt - this.o.clock.now();
          this.scheduleSweep(Math.max(0, Math.min(this.o.sweepIntervalMs, untilNext)));
        })
        .catch((err) => {
          this.o.log.error({ err }, "claim sweep failed");
          this.scheduleSweep(this.o.sweepIntervalMs);
        });
    });
  }

  private scheduleGc(ms: number): void {
    if (this.stopped) return;
    this.cancelGc = this.o.clock.setTimer(ms, () => {
      if (!this.leads()) return this.scheduleGc(this.o.gcIntervalMs);
      this.rounds.gc++;
      this.running = this.collectGarbage()
        .catch((err) => this.o.log.error({ err }, "retention gc failed"))
        .then(() => this.scheduleGc(this.o.gcIntervalMs));
    });
  }
}
