/**
 * Background upkeep, each part O(work to do), never O(queue):
 * - the claim-timeout sweep wakes at the earliest claim expiry (and at least every
 *   `sweepIntervalMs`), returns expired jobs to PENDING or FAILED and tells the broker;
 *   the workflow runs it failed for good end in their instances (workflow-upkeep.ts);
 * - retention GC deletes finished jobs whose retention has passed, in bounded chunks, and
 *   ended workflow instances past the instance retention; the same round runs a bounded
 *   reconciliation pass over running instances (workflow-upkeep.ts);
 * - schedules fire: the firing wakes at the earliest due schedule (and at least every
 *   `fireIntervalMs`, to see schedules made or changed on other nodes).
 * In a cluster only one broker does this work at a time (`isLeader`): every write is
 * conditional (claim tokens, revisions), so a node that still believes it leads during a
 * failover changes nothing twice, but N brokers doing the same work would only multiply
 * the store's work.
 */
import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import { limits } from "../domain/limits.js";
import { type JobCounters, tally } from "../engine/counters.js";
import type { Engine } from "../engine/engine.js";
import type { Store } from "../store/store.js";
import { WorkflowUpkeep } from "./workflow-upkeep.js";

export interface MaintenanceOptions {
  store: Store;
  engine: Engine;
  clock: Clock;
  log: Logger;
  sweepIntervalMs: number;
  gcIntervalMs: number;
  /** How often the leader looks for due schedules at least (default 1 s). */
  fireIntervalMs?: number;
  /** How long ended workflow instances are kept (default limits.instanceRetentionDefaultMs). */
  instanceRetentionMs?: number;
  chunk: number;
  /** Whether this node does the periodic work now; default always (one node). */
  isLeader?: () => boolean;
  /** Where expired claims and collected jobs are counted (metrics); default: nowhere. */
  counters?: JobCounters;
}

export class Maintenance {
  private cancelSweep: (() => void) | undefined;
  private cancelGc: (() => void) | undefined;
  private cancelFire: (() => void) | undefined;
  /** Rounds still running (stop waits for them). */
  private readonly running = new Set<Promise<void>>();
  /** The last schedule-firing pass (fireSchedules): the next waits for it. */
  private firing: Promise<unknown> = Promise.resolve();
  private stopped = true;
  private readonly workflows: WorkflowUpkeep;
  /** Periodic sweeps, GC rounds and schedule firings this node ran (tests: only the leader runs them). */
  readonly rounds = { sweeps: 0, gc: 0, fires: 0 };

  constructor(private readonly o: MaintenanceOptions) {
    this.workflows = new WorkflowUpkeep({
      store: o.store,
      engine: o.engine,
      clock: o.clock,
      log: o.log,
      chunk: o.chunk,
      instanceRetentionMs: o.instanceRetentionMs ?? limits.instanceRetentionDefaultMs,
    });
  }

  private leads(): boolean {
    return this.o.isLeader?.() ?? true;
  }

  start(): void {
    this.stopped = false;
    this.scheduleSweep(0);
    this.scheduleGc(this.o.gcIntervalMs);
    this.scheduleFiring(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelSweep?.();
    this.cancelGc?.();
    this.cancelFire?.();
    await Promise.allSettled([...this.running]);
  }

  /** Expires every claim that has run out; returns how many. */
  async sweepClaims(): Promise<{ expired: number; nextExpiryAt?: number }> {
    let expired = 0;
    for (;;) {
      const result = await this.o.store.jobClaimExpire({ now: this.o.clock.now(), limit: this.o.chunk });
      expired += result.expired.length;
      this.o.engine.announcePending(result.expired);
      // A workflow job failed for good by the sweep took no ACK path: its instance learns it
      // here (and, after a crash before this, from the periodic reconciliation).
      await this.workflows
        .afterSweep(result.expired)
        .catch((err) => this.o.log.warn({ err }, "workflow runs failed by the sweep not reconciled yet"));
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

  /** The workflow part of a GC round: a bounded reconciliation pass, then instance retention. */
  async maintainWorkflows(): Promise<{ reconciled: number; deleted: number }> {
    const reconciled = await this.workflows.reconcilePass();
    return { reconciled, deleted: await this.workflows.deleteEnded() };
  }

  /** Fires every due schedule; returns how many started something and when the next is due. */
  /**
   * Fires the schedules due now. Passes run one after another: a pass asked for while one
   * runs (test control's AdvanceClock while the firing timer's pass is in flight) starts
   * when it ends, so it sees what that pass wrote, and has fired everything due on return.
   */
  fireSchedules(): Promise<{ started: number; nextDueAt?: number }> {
    const pass = this.firing.catch(() => {}).then(() => this.firePass());
    this.firing = pass;
    return pass;
  }

  private async firePass(): Promise<{ started: number; nextDueAt?: number }> {
    const { started, nextDueAt, errors } = await this.o.engine.schedules.fireDue(this.o.chunk);
    for (const err of errors) this.o.log.error({ err }, "schedule fire failed; it stays due");
    if (started > 0) this.o.log.info({ started }, "schedules fired");
    return { started, nextDueAt };
  }

  private track(round: Promise<void>): void {
    this.running.add(round);
    void round.finally(() => this.running.delete(round));
  }

  private scheduleSweep(ms: number): void {
    if (this.stopped) return;
    this.cancelSweep?.();
    this.cancelSweep = this.o.clock.setTimer(ms, () => {
      if (!this.leads()) return this.scheduleSweep(this.o.sweepIntervalMs);
      this.rounds.sweeps++;
      this.track(
        this.sweepClaims()
          .then(({ nextExpiryAt }) => {
            const untilNext = nextExpiryAt === undefined ? this.o.sweepIntervalMs : nextExpiryAt - this.o.clock.now();
            this.scheduleSweep(Math.max(0, Math.min(this.o.sweepIntervalMs, untilNext)));
          })
          .catch((err) => {
            this.o.log.error({ err }, "claim sweep failed");
            this.scheduleSweep(this.o.sweepIntervalMs);
          }),
      );
    });
  }

  private scheduleGc(ms: number): void {
    if (this.stopped) return;
    this.cancelGc = this.o.clock.setTimer(ms, () => {
      if (!this.leads()) return this.scheduleGc(this.o.gcIntervalMs);
      this.rounds.gc++;
      this.track(
        this.collectGarbage()
          .then(() => this.maintainWorkflows())
          .then(
            () => {},
            (err) => this.o.log.error({ err }, "retention gc failed"),
          )
          .then(() => this.scheduleGc(this.o.gcIntervalMs)),
      );
    });
  }

  private scheduleFiring(ms: number): void {
    if (this.stopped) return;
    this.cancelFire?.();
    const every = this.o.fireIntervalMs ?? 1000;
    this.cancelFire = this.o.clock.setTimer(ms, () => {
      if (!this.leads()) return this.scheduleFiring(every);
      this.rounds.fires++;
      this.track(
        this.fireSchedules()
          .then(({ nextDueAt }) => {
            const untilNext = nextDueAt === undefined ? every : nextDueAt - this.o.clock.now();
            this.scheduleFiring(Math.max(0, Math.min(every, untilNext)));
          })
          .catch((err) => {
            this.o.log.error({ err }, "schedule firing failed");
            this.scheduleFiring(every);
          }),
      );
    });
  }
}
