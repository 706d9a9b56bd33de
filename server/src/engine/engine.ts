/**
 * The engine: validates requests, fills defaults, and drives the store and the broker.
 * The API layer calls it with domain values; it knows nothing about Connect.
 */
import type { Clock } from "../domain/clock.js";
import { answerTooLarge, batchTooLarge, invalidArgument, queueNotFound } from "../domain/errors.js";
import { newJobId, parseJobId } from "../domain/job-id.js";
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
import type { QueueRecord, Store } from "../store/store.js";
import { type AckResult, type JobCounters, noCounters, tally } from "./counters.js";
import type { Dispatch } from "./dispatch.js";
import { announceExpired, announceInserted, announceOutcomes } from "./due-announcements.js";
import type { AckInput, CheckpointItemInput, FilterInput, JobOutcome, JobSpecInput, QueueView } from "./inputs.js";
import { ownIds } from "./own-ids.js";
import { decodeCursor, encodeCursor } from "./page-token.js";
import { PartitionPicker } from "./partition-picker.js";
import { QueueCache } from "./queue-cache.js";
import {
  bodyTooLarge,
  boundedLimit,
  checkAttempts,
  checkDuration,
  checkPriority,
  checkRunAfter,
  fitting,
  toFilter,
  truncateStatus,
} from "./request-checks.js";

export interface EngineOptions {
  store: Store;
  /** Where Dequeue goes and due jobs are announced: the local broker, or the cluster router. */
  broker: Dispatch;
  clock: Clock;
  /** Where job movements are counted (metrics); default: nowhere. */
  counters?: JobCounters;
}

export class Engine {
  private readonly store: Store;
  private readonly broker: Dispatch;
  private readonly clock: Clock;
  private readonly counters: JobCounters;
  private readonly partitions = new PartitionPicker();
  private readonly queues: QueueCache;

  constructor(o: EngineOptions) {
    this.store = o.store;
    this.broker = o.broker;
    this.clock = o.clock;
    this.counters = o.counters ?? noCounters;
    this.queues = new QueueCache(o.store, o.clock);
  }

  // ---- queues

  async createQueue(name: string, input: QueueConfigInput): Promise<{ view: QueueView; created: boolean }> {
    validateQueueName(name, "name");
    const config = resolveQueueConfig(input);
    const { queue, created } = await this.store.queueCreate({ name, config, now: this.clock.now() });
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
    this.queues.forget(name);
    this.broker.onQueueDeleted(name);
    return deleted;
  }

  async listQueues(): Promise<QueueView[]> {
    const queues = await this.store.queueList();
    return Promise.all(queues.map((q) => this.view(q)));
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
    const ids = await this.store.jobInsertMany({ jobs, now });
    announceInserted(this.broker, jobs);
    for (const [queue, n] of jobs.reduce((counts, job) => tally(counts, job.queue), new Map<string, number>()))
      this.counters.enqueued(queue, n);
    return ids;
  }

  /**
   * Without `includeBody` the bodies are not read (they come back empty); with it they
   * must fit one answer (limits.answerBodyBytesMax) unless one job is asked for. When the
   * largest bodies any queue accepts could pass that, their sizes are read first, so a
   * lookup refused for its size never reads the bodies: the server's memory per call stays
   * within the bound. (A single job, or a few, is one read.)
   */
  async getJobs(requested: string[], includeBody = true): Promise<Array<JobRecord | undefined>> {
    if (requested.length > limits.getJobsMax) throw batchTooLarge("job_ids", requested.length, limits.getJobsMax);
    // A string that is not a job id names no job: the store is not asked about it (MySQL
    // refuses to compare non-ASCII text with its ASCII id column).
    const ids = requested.filter((id) => parseJobId(id) !== undefined);
    if (includeBody && ids.length * limits.maxBodyBytesMax > limits.answerBodyBytesMax) {
      const sized = await this.store.jobGetMany({ ids, bodies: false });
      const bytes = sized.reduce((n, job) => n + (job?.bodySize ?? 0), 0);
      if (bytes > limits.answerBodyBytesMax) throw answerTooLarge("job_ids", bytes, limits.answerBodyBytesMax);
    }
    const found = ids.length === 0 ? [] : await this.store.jobGetMany({ ids, bodies: includeBody });
    if (ids.length === requested.length) return found;
    const byId = new Map(ids.map((id, i) => [id, found[i]]));
    return requested.map((id) => byId.get(id));
  }

  /**
   * With `includeBody`, a page ends early where its bodies would pass
   * limits.answerBodyBytesMax (it holds at least one job). The page is scanned without
   * bodies and cut by their sizes; then only the page's bodies are read.
   */
  async scanJobs(p: {
    queue: string;
    filter: FilterInput;
    limit: number;
    pageToken: string;
    includeBody?: boolean;
  }): Promise<{ jobs: JobRecord[]; nextPageToken: string }> {
    await this.queues.get(p.queue, "queue");
    const limit = boundedLimit(p.limit, limits.scanLimitDefault, limits.scanLimitMax, "limit");
    const cursor = p.pageToken === "" ? undefined : decodeCursor(p.pageToken);
    const jobs = await this.store.jobScan({
      queue: p.queue,
      filter: toFilter(p.filter),
      limit: limit + 1,
      cursor,
      bodies: false,
      now: this.clock.now(),
    });
    const end = Math.min(
      limit,
      p.includeBody
        ? fitting(
            jobs.map((job) => job.bodySize ?? 0),
            limits.answerBodyBytesMax,
          )
        : jobs.length,
    );
    const page = jobs.slice(0, end);
    const last = page[page.length - 1];
    const nextPageToken = jobs.length > end && last ? encodeCursor({ runAfter: last.runAfter, id: last.id }) : "";
    return { jobs: p.includeBody ? await this.withBodies(page) : page, nextPageToken };
  }

  /** The jobs with their bodies read; a job deleted since it was scanned leaves the page. */
  private async withBodies(jobs: JobRecord[]): Promise<JobRecord[]> {
    if (jobs.length === 0) return jobs;
    const whole = await this.store.jobGetMany({ ids: jobs.map((job) => job.id), bodies: true });
    return jobs.flatMap((job, i) => {
      const found = whole[i];
      if (!found) return [];
      const { bodySize: _, ...scanned } = job;
      return [{ ...scanned, body: found.body }];
    });
  }

  async countJobs(p: { queue: string; filter: FilterInput }): Promise<number> {
    await this.queues.get(p.queue, "queue");
    return this.store.jobCount({ queue: p.queue, filter: toFilter(p.filter), now: this.clock.now() });
  }

  async retryFailedJobs(p: {
    queue: string;
    priority: number;
    attemptsAllowed: number;
    runAfter?: number;
    limit: number;
  }): Promise<number> {
    const { config } = await this.queues.get(p.queue, "queue");
    checkPriority(p.priority, config, "priority", true);
    checkAttempts(p.attemptsAllowed, "attempts_allowed");
    const now = this.clock.now();
    checkRunAfter(p.runAfter, now, "run_after");
    const runAfter = Math.max(now, p.runAfter ?? now);
    const count = await this.store.jobRetryFailed({
      queue: p.queue,
      priority: p.priority || undefined,
      attemptsAllowed: p.attemptsAllowed || config.defaultAttemptsAllowed,
      runAfter,
      limit: boundedLimit(p.limit, limits.bulkLimitDefault, limits.bulkLimitMax, "limit"),
      now,
    });
    if (count > 0) for (let i = 0; i < config.partitions; i++) this.broker.notify(p.queue, i, runAfter);
    return count;
  }

  async deleteJobs(p: { queue: string; filter: FilterInput; limit: number }): Promise<number> {
    const { config } = await this.queues.get(p.queue, "queue");
    if (!p.filter.state)
      throw invalidArgument(
        "state",
        "state is required (PENDING, RUNNING, SUCCEEDED or FAILED); to delete everything use DeleteQueue",
      );
    const limit = boundedLimit(p.limit, limits.bulkLimitDefault, limits.bulkLimitMax, "limit");
    const now = this.clock.now();
    const count = await this.store.jobDeleteMany({ queue: p.queue, filter: toFilter(p.filter), limit, now });
    // A deleted job may have been the head of its ordering key: the next one is claimable now.
    if (count > 0) for (let i = 0; i < config.partitions; i++) this.broker.notify(p.queue, i, now);
    return count;
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
    return { jobs, ack };
  }

  async ack(p: AckInput): Promise<JobOutcome[]> {
    validateQueueName(p.queue);
    const total = p.succeeded.length + p.failed.length;
    if (total > limits.ackBatchMax) throw batchTooLarge("succeeded+failed", total, limits.ackBatchMax);
    for (const [i, f] of p.failed.entries())
      checkDuration(f.retryDelayMs, limits.retryDelayMaxMs, `failed[${i}].retry_delay`);
    await this.queues.get(p.queue, "queue");
    const now = this.clock.now();
    const succeeded = ownIds(p.queue, p.succeeded);
    const failed = ownIds(p.queue, p.failed);
    const [okResults, failResults] = await Promise.all([
      this.store.jobCompleteMany({
        items: succeeded.mine.map((s) => ({
          id: s.jobId,
          claimToken: s.claimToken,
          customStatus: truncateStatus(s.customStatus),
        })),
        now,
      }),
      this.store.jobFailMany({
        items: failed.mine.map((f) => ({
          id: f.jobId,
          claimToken: f.claimToken,
          customStatus: truncateStatus(f.customStatus),
          retryDelayMs: f.retryDelayMs,
          noRetry: f.noRetry,
        })),
        now,
      }),
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
  async releaseUndelivered(jobs: Array<Pick<JobRecord, "id" | "claimToken">>): Promise<void> {
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
    };
  }
}
