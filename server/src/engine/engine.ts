/**
 * The engine: validates requests, fills defaults, and drives the store and the broker.
 * The API layer calls it with domain values; it knows nothing about Connect.
 */
import type { Clock } from "../domain/clock.js";
import { batchTooLarge, invalidArgument, queueNotFound } from "../domain/errors.js";
import { newJobId } from "../domain/job-id.js";
import type { JobRecord, NewJob } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import { storedOrderingKey } from "../domain/ordering.js";
import {
  type QueueConfig,
  type QueueConfigInput,
  resolveQueueConfig,
  updateQueueConfig,
  validateQueueName,
} from "../domain/queue-config.js";
import { storedTraceparent } from "../domain/trace-context.js";
import type { AckResultRecord, QueueRecord, Store } from "../store/store.js";
import { type AckResult, type JobCounters, noCounters, tally } from "./counters.js";
import type { Dispatch } from "./dispatch.js";
import { announceExpired, announceInserted, announceOutcomes } from "./due-announcements.js";
import type { AckInput, CheckpointItemInput, JobOutcome, JobSpecInput, QueueView } from "./inputs.js";
import { InsertGroups } from "./insert-groups.js";
import { JobAdmin } from "./job-admin.js";
import { ownIds } from "./own-ids.js";
import { PartitionPicker } from "./partition-picker.js";
import { QueueCache } from "./queue-cache.js";
import { QueueQuota } from "./queue-quota.js";
import {
  bodyTooLarge,
  boundedLimit,
  checkAttempts,
  checkDuration,
  checkPriority,
  checkRunAfter,
  fitting,
  truncateStatus,
} from "./request-checks.js";
import { Schedules } from "./schedules.js";
import { Workflows } from "./workflows.js";

export interface EngineOptions {
  store: Store;
  /** Where Dequeue goes and due jobs are announced: the local broker, or the cluster router. */
  broker: Dispatch;
  clock: Clock;
  /** Where job movements are counted (metrics); default: nowhere. */
  counters?: JobCounters;
  /** The most queues the store may hold (`--max-queues`); default limits.queuesMaxDefault. */
  maxQueues?: number;
}

const NO_RESULT = new Uint8Array();

export class Engine {
  private readonly store: Store;
  private readonly broker: Dispatch;
  private readonly clock: Clock;
  private readonly counters: JobCounters;
  private readonly partitions = new PartitionPicker();
  private readonly queues: QueueCache;
  private readonly admin: JobAdmin;
  private readonly quota: QueueQuota;
  /** Enqueue's store writes, small calls for one queue grouped (group commit). */
  private readonly inserts: InsertGroups;
  /** Workflow definitions and instances (docs/workflows.md). */
  readonly workflows: Workflows;
  /** Schedules (docs/workflows.md#schedules). */
  readonly schedules: Schedules;
  /** Hand-backs of undelivered jobs still being written (releaseUndelivered). */
  private readonly handingBack = new Set<Promise<void>>();

  constructor(o: EngineOptions) {
    this.store = o.store;
    this.broker = o.broker;
    this.clock = o.clock;
    this.counters = o.counters ?? noCounters;
    this.queues = new QueueCache(o.store, o.clock);
    this.inserts = new InsertGroups(o.store);
    this.quota = new QueueQuota(o.store, o.clock, o.maxQueues ?? limits.queuesMaxDefault);
    this.admin = new JobAdmin({ store: o.store, clock: o.clock, broker: o.broker, queues: this.queues });
    this.workflows = new Workflows({
      store: o.store,
      clock: o.clock,
      broker: o.broker,
      queues: this.queues,
      partitions: this.partitions,
    });
    this.schedules = new Schedules({
      store: o.store,
      clock: o.clock,
      broker: o.broker,
      queues: this.queues,
      partitions: this.partitions,
      workflows: this.workflows,
    });
  }

  // ---- queues

  async createQueue(name: string, input: QueueConfigInput): Promise<{ view: QueueView; created: boolean }> {
    validateQueueName(name, "name");
    const config = resolveQueueConfig(input);
    // An existing queue answers as before (create is idempotent), whatever the count.
    const existing = await this.store.queueGet({ name });
    if (existing) return { view: await this.view(existing), created: false };
    await this.quota.checkRoom(name);
    const { queue, created } = await this.store.queueCreate({ name, config, now: this.clock.now() });
    if (created) this.quota.created();
    return { view: await this.view(queue), created };
  }

  async updateQueue(name: string, input: QueueConfigInput, mask: string[]): Promise<QueueView> {
    const current = await this.queues.get(name, "name", true);
    const config = updateQueueConfig(current.config, input, mask);
    const updated = await this.store.queueUpdate({ name, config });
    this.queues.forget(name);
    if (!updated) throw queueNotFound(name);
    this.broker.onQueueUpdated(name, config);
    return this.view(updated);
  }

  async deleteQueue(name: string): Promise<boolean> {
    validateQueueName(name, "name");
    // The broker lets go first: a store deletes a big queue over many calls, and lease
    // renewals meanwhile would find its partitions gone (or take them again). Once more
    // after, for a Dequeue that loaded the queue again while it was being deleted.
    this.broker.onQueueDeleted(name);
    const deleted = await this.store.queueDelete({ name });
    if (deleted) this.quota.deleted();
    this.queues.forget(name);
    this.broker.onQueueDeleted(name);
    return deleted;
  }

  async listQueues(): Promise<QueueView[]> {
    const queues = await this.store.queueList();
    return Promise.all(queues.map((q) => this.view(q)));
  }

  /** Every queue's name and config, without stats (cheap: for the cluster view's partition counts). */
  listQueueRecords(): Promise<QueueRecord[]> {
    return this.store.queueList();
  }

  async getQueue(name: string): Promise<QueueView> {
    return this.view(await this.queues.get(name, "name", true));
  }

  /** Throws NOT_FOUND (naming `field`) unless the queue exists. */
  async requireQueue(name: string, field = "queue"): Promise<void> {
    await this.queues.get(name, field);
  }

  // ---- jobs

  async enqueue(specs: JobSpecInput[]): Promise<string[]> {
    if (specs.length === 0) throw invalidArgument("jobs", "jobs is empty: send at least one JobSpec");
    if (specs.length > limits.enqueueBatchMax) throw batchTooLarge("jobs", specs.length, limits.enqueueBatchMax);
    const configs = new Map<string, QueueConfig>();
    for (const [i, spec] of specs.entries()) {
      validateQueueName(spec.queue, `jobs[${i}].queue`);
      if (!configs.has(spec.queue))
        configs.set(spec.queue, (await this.queues.get(spec.queue, `jobs[${i}].queue`)).config);
    }
    const now = this.clock.now();
    // Validate the whole batch before writing anything.
    const jobs: NewJob[] = specs.map((spec, i) => this.newJob(spec, configs.get(spec.queue)!, i, now));
    const ids = await this.inserts.insert(jobs, now);
    announceInserted(this.broker, jobs);
    for (const [queue, n] of jobs.reduce((counts, job) => tally(counts, job.queue), new Map<string, number>()))
      this.counters.enqueued(queue, n);
    return ids;
  }

  getJobs(ids: string[], includeBody = true): Promise<Array<JobRecord | undefined>> {
    return this.admin.getJobs(ids, includeBody);
  }

  scanJobs(p: Parameters<JobAdmin["scanJobs"]>[0]): ReturnType<JobAdmin["scanJobs"]> {
    return this.admin.scanJobs(p);
  }

  countJobs(p: Parameters<JobAdmin["countJobs"]>[0]): Promise<number> {
    return this.admin.countJobs(p);
  }

  retryFailedJobs(p: Parameters<JobAdmin["retryFailedJobs"]>[0]): Promise<number> {
    return this.admin.retryFailedJobs(p);
  }

  deleteJobs(p: Parameters<JobAdmin["deleteJobs"]>[0]): Promise<number> {
    return this.admin.deleteJobs(p);
  }

  // ---- worker side

  async dequeue(p: {
    queue: string;
    limit: number;
    waitMs: number;
    signal?: AbortSignal;
    dryRun: boolean;
    ack?: AckInput;
    forwarded?: boolean;
    forwardedCall?: string;
  }): Promise<{ jobs: JobRecord[]; ack?: JobOutcome[] }> {
    validateQueueName(p.queue);
    const limit = boundedLimit(p.limit, 1, limits.dequeueLimitMax, "limit");
    if (p.waitMs < 0) throw invalidArgument("wait", "wait must not be negative");
    // Acks are always applied, even when nothing is handed out (PinLater dropped them).
    const acking = p.ack ? this.ack({ ...p.ack, queue: p.ack.queue || p.queue }) : Promise.resolve(undefined);
    if (p.dryRun) {
      const ack = await acking;
      await this.queues.get(p.queue, "queue");
      const peeked = await this.store.jobPeekMany({ queue: p.queue, limit, now: this.clock.now() });
      // The same bound on body bytes as a real hand-out (Broker.take).
      return {
        jobs: peeked.slice(
          0,
          fitting(
            peeked.map((job) => job.body.length),
            limits.dequeueBodyBytesMax,
          ),
        ),
        ack,
      };
    }
    const waitMs = Math.min(p.waitMs, limits.dequeueWaitMaxMs);
    // Jobs are started while the acks are written (they concern other jobs): on a durable
    // store the two commits share a log flush instead of following each other.
    const [acked, taken] = await Promise.allSettled([
      acking,
      this.broker.dequeue({
        queue: p.queue,
        limit,
        waitMs,
        signal: p.signal,
        forwarded: p.forwarded,
        forwardedCall: p.forwardedCall,
      }),
    ]);
    if (acked.status === "rejected") {
      // The call fails: the jobs just started must not be lost to their claim timeout.
      if (taken.status === "fulfilled" && taken.value.length > 0) await this.releaseUndelivered(taken.value);
      throw acked.reason;
    }
    if (taken.status === "rejected") throw taken.reason;
    const ack = acked.value;
    const jobs = taken.value;
    if (p.signal?.aborted && jobs.length > 0) {
      // The caller gave up while its jobs were being started: hand them back at once,
      // charging nothing, rather than letting their claims time out.
      await this.releaseUndelivered(jobs);
      return { jobs: [], ack };
    }
    // A forwarded call's jobs are counted by the node the worker called.
    if (!p.forwarded && jobs.length > 0) this.counters.handedOut(p.queue, jobs.length);
    this.workflows.handedOut(jobs);
    return { jobs, ack };
  }

  async ack(p: AckInput): Promise<JobOutcome[]> {
    validateQueueName(p.queue);
    const total = p.succeeded.length + p.failed.length;
    if (total > limits.ackBatchMax) throw batchTooLarge("succeeded+failed", total, limits.ackBatchMax);
    for (const [i, f] of p.failed.entries())
      checkDuration(f.retryDelayMs, limits.retryDelayMaxMs, `failed[${i}].retry_delay`);
    for (const [i, s] of p.succeeded.entries()) {
      if (s.result && s.result.length > limits.workflowResultBytesMax) {
        throw invalidArgument(
          `succeeded[${i}].result`,
          `result is ${s.result.length} bytes; at most ${limits.workflowResultBytesMax}`,
        );
      }
    }
    await this.queues.get(p.queue, "queue");
    const now = this.clock.now();
    const succeeded = ownIds(p.queue, p.succeeded);
    const failed = ownIds(p.queue, p.failed);
    const completes = succeeded.mine.map((s) => ({
      id: s.jobId,
      claimToken: s.claimToken,
      customStatus: truncateStatus(s.customStatus),
    }));
    const fails = failed.mine.map((f) => ({
      id: f.jobId,
      claimToken: f.claimToken,
      customStatus: truncateStatus(f.customStatus),
      retryDelayMs: f.retryDelayMs,
      noRetry: f.noRetry,
    }));
    // A workflow run this process handed out skips the plain ACK (which would only answer
    // "workflow" with its context): its workflow step checks the claim itself.
    const runs = completes.map((c) => this.workflows.runHandedOut(c.id));
    const [plainCompleted, failedResults] = await Promise.all([
      this.store.jobCompleteMany({ items: completes.filter((_, k) => runs[k] === undefined), now }),
      this.store.jobFailMany({ items: fails, now }),
    ]);
    let plain = 0;
    const completed = runs.map(
      (workflow): AckResultRecord =>
        workflow !== undefined ? { outcome: "workflow", workflow } : plainCompleted[plain++]!,
    );
    // Runs of workflow jobs were left alone by those calls: they go through the workflow step.
    const [okResults, failResults] = await Promise.all([
      this.workflows.settleAcks(completed, (k) => ({
        ack: { kind: "complete", ...completes[k]! },
        output: { customStatus: completes[k]!.customStatus, result: succeeded.mine[k]!.result ?? NO_RESULT },
        postEvents: succeeded.mine[k]!.noEvents !== true,
      })),
      this.workflows.settleAcks(failedResults, (k) => ({
        ack: { kind: "fail", ...fails[k]! },
        output: { customStatus: fails[k]!.customStatus, result: NO_RESULT },
        postEvents: false,
      })),
    ]);
    announceOutcomes(
      this.broker,
      succeeded.mine.map((s) => s.jobId),
      okResults,
    );
    announceOutcomes(
      this.broker,
      failed.mine.map((f) => f.jobId),
      failResults,
    );
    const ok = succeeded.merge(okResults);
    const bad = failed.merge(failResults);
    const counts = new Map<AckResult, number>();
    for (const o of ok) tally(counts, o.outcome === "acknowledged" ? "succeeded" : o.outcome);
    for (const o of bad) tally(counts, o.outcome === "acknowledged" ? "failed" : o.outcome);
    for (const [result, n] of counts) this.counters.acked(p.queue, result, n);
    return [...ok, ...bad];
  }

  async checkpoint(p: { queue: string; items: CheckpointItemInput[] }): Promise<JobOutcome[]> {
    validateQueueName(p.queue);
    if (p.items.length > limits.checkpointBatchMax)
      throw batchTooLarge("checkpoints", p.items.length, limits.checkpointBatchMax);
    const { config } = await this.queues.get(p.queue, "queue");
    const now = this.clock.now();
    for (const [i, c] of p.items.entries()) {
      checkDuration(c.extendClaimByMs, limits.claimTimeoutMaxMs, `checkpoints[${i}].extend_claim_by`);
      checkRunAfter(c.runAfter, now, `checkpoints[${i}].run_after`);
      if (c.newBody && c.newBody.length > config.maxBodyBytes)
        throw bodyTooLarge(`checkpoints[${i}].new_body`, c.newBody.length, config.maxBodyBytes);
      checkAttempts(c.attemptsAllowed, `checkpoints[${i}].attempts_allowed`);
    }
    const items = ownIds(p.queue, p.items);
    const results = await this.store.jobCheckpointMany({
      items: items.mine.map((c) => ({
        id: c.jobId,
        claimToken: c.claimToken,
        claimExpiresAt: now + (c.extendClaimByMs ?? config.claimTimeoutMs),
        newBody: c.newBody,
        moveToPending: c.moveToPending,
        runAfter: Math.max(now, c.runAfter ?? now),
        attemptsAllowed: c.attemptsAllowed,
        customStatus: truncateStatus(c.customStatus),
      })),
      now,
    });
    announceOutcomes(
      this.broker,
      items.mine.map((c) => c.jobId),
      results,
    );
    const outcomes = items.merge(results);
    outcomes.forEach((o, i) => {
      const c = p.items[i]!;
      if (o.outcome === "acknowledged" && !c.moveToPending)
        o.claimExpiresAt = now + (c.extendClaimByMs ?? config.claimTimeoutMs);
    });
    return outcomes;
  }

  /** Jobs started for a caller that did not get them: back to pending at once, charging nothing. */
  releaseUndelivered(jobs: Array<Pick<JobRecord, "id" | "claimToken">>): Promise<void> {
    const release = this.handBack(jobs);
    this.handingBack.add(release);
    void release.finally(() => this.handingBack.delete(release)).catch(() => {});
    return release;
  }

  /** Resolves once every hand-back started so far has ended: shutdown waits for them before it closes the store. */
  async handBacksSettled(): Promise<void> {
    await Promise.allSettled([...this.handingBack]);
  }

  private async handBack(jobs: Array<Pick<JobRecord, "id" | "claimToken">>): Promise<void> {
    const now = this.clock.now();
    const results = await this.store.jobCheckpointMany({
      items: jobs.map((j) => ({
        id: j.id,
        claimToken: j.claimToken,
        claimExpiresAt: 0,
        moveToPending: true,
        runAfter: now,
        attemptsAllowed: 0,
        customStatus: "",
      })),
      now,
    });
    announceOutcomes(
      this.broker,
      jobs.map((j) => j.id),
      results,
    );
  }

  /**
   * Called by maintenance after the claim-timeout sweep: jobs back to pending are due
   * again, and a job that failed for good let the next job of its ordering key go.
   */
  announcePending(jobs: JobRecord[]): void {
    announceExpired(this.broker, jobs, this.clock.now());
  }

  // ---- helpers

  private async view(queue: QueueRecord): Promise<QueueView> {
    return { queue, stats: await this.store.queueStats({ name: queue.name, now: this.clock.now() }) };
  }

  private newJob(spec: JobSpecInput, config: QueueConfig, i: number, now: number): NewJob {
    const priority = spec.priority || 1;
    checkPriority(priority, config, `jobs[${i}].priority`, false);
    if (spec.body.length > config.maxBodyBytes)
      throw bodyTooLarge(`jobs[${i}].body`, spec.body.length, config.maxBodyBytes);
    checkAttempts(spec.attemptsAllowed, `jobs[${i}].attempts_allowed`);
    checkRunAfter(spec.runAfter, now, `jobs[${i}].run_after`);
    if (spec.idempotencyKey.length > limits.idempotencyKeyMaxLength) {
      throw invalidArgument(
        `jobs[${i}].idempotency_key`,
        `idempotency_key is longer than ${limits.idempotencyKeyMaxLength} characters`,
      );
    }
    const orderingKey = storedOrderingKey(spec.orderingKey ?? "", config, `jobs[${i}].ordering_key`);
    const partition = this.partitions.pick(spec.queue, orderingKey || spec.idempotencyKey, config);
    const traceparent = storedTraceparent(spec.traceparent ?? "", `jobs[${i}].traceparent`);
    return {
      id: newJobId(spec.queue, partition, now),
      queue: spec.queue,
      partition,
      priority,
      body: spec.body,
      runAfter: Math.max(now, spec.runAfter ?? now),
      attemptsAllowed: spec.attemptsAllowed || config.defaultAttemptsAllowed,
      customStatus: truncateStatus(spec.customStatus),
      createdAt: now,
      idempotencyKey: spec.idempotencyKey,
      orderingKey,
      ...(traceparent !== undefined ? { traceparent } : {}),
    };
  }
}
