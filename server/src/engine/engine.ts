/**
 * The engine: validates requests, fills defaults, and drives the store and the broker.
 * The API layer calls it with domain values; it knows nothing about Connect.
 */
import { createHash } from "node:crypto";
import type { OutcomeResult, QueueRecord, QueueStatsRecord, Store } from "../store/store.js";
import type { Clock } from "../domain/clock.js";
import { byteBudget } from "../domain/byte-budget.js";
import { type AckResult, type JobCounters, noCounters, tally } from "./counters.js";
import type { Dispatch } from "./dispatch.js";
import { answerTooLarge, batchTooLarge, invalidArgument, queueNotFound, RunlaterError } from "../domain/errors.js";
import { newJobId, parseJobId } from "../domain/job-id.js";
import type { JobRecord, NewJob, Outcome } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import { storedOrderingKey } from "../domain/ordering.js";
import { type QueueConfigInput, resolveQueueConfig, updateQueueConfig, validateQueueName, type QueueConfig } from "../domain/queue-config.js";
import { appendStatus } from "../domain/transitions.js";
import type { JobFilter, ScanCursor } from "../domain/job-filter.js";

export interface JobSpecInput {
  queue: string;
  body: Uint8Array;
  priority: number;
  /** Absolute ms; undefined = now. */
  runAfter?: number;
  attemptsAllowed: number;
  idempotencyKey: string;
  customStatus: string;
  /** "" or absent: none. Ignored on FIFO queues (the whole queue is one sequence). */
  orderingKey?: string;
}

export interface QueueView {
  queue: QueueRecord;
  stats: QueueStatsRecord;
}

export interface FilterInput {
  state?: JobFilter["state"];
  priority: number;
  future?: boolean;
  bodyRegex: string;
}

export interface AckInput {
  queue: string;
  succeeded: Array<{ jobId: string; claimToken: string; customStatus: string }>;
  failed: Array<{ jobId: string; claimToken: string; customStatus: string; retryDelayMs?: number; noRetry: boolean }>;
}

export interface CheckpointItemInput {
  jobId: string;
  claimToken: string;
  extendClaimByMs?: number;
  newBody?: Uint8Array;
  moveToPending: boolean;
  runAfter?: number;
  attemptsAllowed: number;
  customStatus: string;
}

export interface JobOutcome {
  jobId: string;
  outcome: Outcome;
  /** Checkpoints that kept the job running: the claim's new expiry. */
  claimExpiresAt?: number;
}

const QUEUE_CACHE_MS = 1000;

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
  private readonly roundRobin = new Map<string, number>();
  /**
   * Queue records read on the hot path (enqueue, ack, checkpoint) are cached briefly so a
   * call costs no extra store round trip. Local changes invalidate at once; a change made
   * through another node is seen within QUEUE_CACHE_MS (stores still refuse writes to a
   * queue that no longer exists).
   */
  private readonly queueCache = new Map<string, { record: QueueRecord; at: number }>();

  constructor(o: EngineOptions) {
    this.store = o.store;
    this.broker = o.broker;
    this.clock = o.clock;
    this.counters = o.counters ?? noCounters;
  }

  // ---- queues

  async createQueue(name: string, input: QueueConfigInput): Promise<{ view: QueueView; created: boolean }> {
    validateQueueName(name, "name");
    const config = resolveQueueConfig(input);
    const { queue, created } = await this.store.queueCreate({ name, config, now: this.clock.now() });
    return { view: await this.view(queue), created };
  }

  async updateQueue(name: string, input: QueueConfigInput, mask: string[]): Promise<QueueView> {
    const current = await this.queueRecord(name, "name", true);
    const config = updateQueueConfig(current.config, input, mask);
    const updated = await this.store.queueUpdate({ name, config });
    this.queueCache.delete(name);
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
    this.queueCache.delete(name);
    this.broker.onQueueDeleted(name);
    return deleted;
  }

  async listQueues(): Promise<QueueView[]> {
    const queues = await this.store.queueList();
    return Promise.all(queues.map((q) => this.view(q)));
  }

  async getQueue(name: string): Promise<QueueView> {
    return this.view(await this.queueRecord(name, "name", true));
  }

  /** Throws NOT_FOUND (naming `field`) unless the queue exists. */
  async requireQueue(name: string, field = "queue"): Promise<void> {
    await this.queueRecord(name, field);
  }

  // ---- jobs

  async enqueue(specs: JobSpecInput[]): Promise<string[]> {
    if (specs.length === 0) throw invalidArgument("jobs", "jobs is empty: send at least one JobSpec");
    if (specs.length > limits.enqueueBatchMax) throw batchTooLarge("jobs", specs.length, limits.enqueueBatchMax);
    const configs = new Map<string, QueueConfig>();
    for (const [i, spec] of specs.entries()) {
      validateQueueName(spec.queue, `jobs[${i}].queue`);
      if (!configs.has(spec.queue)) configs.set(spec.queue, (await this.queueRecord(spec.queue, `jobs[${i}].queue`)).config);
    }
    const now = this.clock.now();
    // Validate the whole batch before writing anything.
    const jobs: NewJob[] = specs.map((spec, i) => this.newJob(spec, configs.get(spec.queue)!, i, now));
    const ids = await this.store.jobInsertMany({ jobs, now });
    this.announceInserted(jobs);
    for (const [queue, n] of jobs.reduce((counts, job) => tally(counts, job.queue), new Map<string, number>())) this.counters.enqueued(queue, n);
    return ids;
  }

  /**
   * Without `includeBody` the bodies are not read (they come back empty); with it they
   * must fit one answer (limits.answerBodyBytesMax) unless one job is asked for. When the
   * largest bodies any queue accepts could pass that, their sizes are read first, so a
   * lookup refused for its size never reads the bodies: the server's memory per call stays
   * within the bound. (A single job, or a few, is one read.)
   */
  async getJobs(ids: string[], includeBody = true): Promise<Array<JobRecord | undefined>> {
    if (ids.length > limits.getJobsMax) throw batchTooLarge("job_ids", ids.length, limits.getJobsMax);
    if (includeBody && ids.length * limits.maxBodyBytesMax > limits.answerBodyBytesMax) {
      const sized = await this.store.jobGetMany({ ids, bodies: false });
      const bytes = sized.reduce((n, job) => n + (job?.bodySize ?? 0), 0);
      if (bytes > limits.answerBodyBytesMax) throw answerTooLarge("job_ids", bytes, limits.answerBodyBytesMax);
    }
    return this.store.jobGetMany({ ids, bodies: includeBody });
  }

  /**
   * With `includeBody`, a page ends early where its bodies would pass
   * limits.answerBodyBytesMax (it holds at least one job). The page is scanned without
   * bodies and cut by their sizes; then only the page's bodies are read.
   */
  async scanJobs(p: { queue: string; filter: FilterInput; limit: number; pageToken: string; includeBody?: boolean }): Promise<{ jobs: JobRecord[]; nextPageToken: string }> {
    await this.queueRecord(p.queue, "queue");
    const limit = boundedLimit(p.limit, limits.scanLimitDefault, limits.scanLimitMax, "limit");
    const cursor = p.pageToken === "" ? undefined : decodeCursor(p.pageToken);
    const jobs = await this.store.jobScan({ queue: p.queue, filter: toFilter(p.filter), limit: limit + 1, cursor, bodies: false, now: this.clock.now() });
    const end = Math.min(limit, p.includeBody ? fitting(jobs.map((job) => job.bodySize ?? 0), limits.answerBodyBytesMax) : jobs.length);
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
    await this.queueRecord(p.queue, "queue");
    return this.store.jobCount({ queue: p.queue, filter: toFilter(p.filter), now: this.clock.now() });
  }

  async retryFailedJobs(p: { queue: string; priority: number; attemptsAllowed: number; runAfter?: number; limit: number }): Promise<number> {
    const { config } = await this.queueRecord(p.queue, "queue");
    checkPriority(p.priority, config, "priority", true);
    checkAttempts(p.attemptsAllowed, "attempts_allowed");
    const now = this.clock.now();
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
    const { config } = await this.queueRecord(p.queue, "queue");
    if (!p.filter.state) throw invalidArgument("state", "state is required (PENDING, RUNNING, SUCCEEDED or FAILED); to delete everything use DeleteQueue");
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
      await this.queueRecord(p.queue, "queue");
      const peeked = await this.store.jobPeekMany({ queue: p.queue, limit, now: this.clock.now() });
      // The same bound on body bytes as a real hand-out (Broker.take).
      return { jobs: peeked.slice(0, fitting(peeked.map((job) => job.body.length), limits.dequeueBodyBytesMax)), ack };
    }
    const waitMs = Math.min(p.waitMs, limits.dequeueWaitMaxMs);
    // Jobs are started while the acks are written (they concern other jobs): on a durable
    // store the two commits share a log flush instead of following each other.
    const [acked, taken] = await Promise.allSettled([acking, this.broker.dequeue({ queue: p.queue, limit, waitMs, signal: p.signal, forwarded: p.forwarded, forwardedCall: p.forwardedCall })]);
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
    for (const [i, f] of p.failed.entries()) {
      if (f.retryDelayMs !== undefined && f.retryDelayMs < 0) throw invalidArgument(`failed[${i}].retry_delay`, "retry_delay must not be negative");
    }
    await this.queueRecord(p.queue, "queue");
    const now = this.clock.now();
    const succeeded = this.ownIds(p.queue, p.succeeded);
    const failed = this.ownIds(p.queue, p.failed);
    const [okResults, failResults] = await Promise.all([
      this.store.jobCompleteMany({
        items: succeeded.mine.map((s) => ({ id: s.jobId, claimToken: s.claimToken, customStatus: truncateStatus(s.customStatus) })),
        now,
      }),
      this.store.jobFailMany({
        items: failed.mine.map((f) => ({ id: f.jobId, claimToken: f.claimToken, customStatus: truncateStatus(f.customStatus), retryDelayMs: f.retryDelayMs, noRetry: f.noRetry })),
        now,
      }),
    ]);
    this.announce(succeeded.mine.map((s) => s.jobId), okResults);
    this.announce(failed.mine.map((f) => f.jobId), failResults);
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
    if (p.items.length > limits.checkpointBatchMax) throw batchTooLarge("checkpoints", p.items.length, limits.checkpointBatchMax);
    const { config } = await this.queueRecord(p.queue, "queue");
    for (const [i, c] of p.items.entries()) {
      if (c.extendClaimByMs !== undefined && c.extendClaimByMs < 0) throw invalidArgument(`checkpoints[${i}].extend_claim_by`, "extend_claim_by must not be negative");
      if (c.newBody && c.newBody.length > config.maxBodyBytes) throw bodyTooLarge(`checkpoints[${i}].new_body`, c.newBody.length, config.maxBodyBytes);
      checkAttempts(c.attemptsAllowed, `checkpoints[${i}].attempts_allowed`);
    }
    const now = this.clock.now();
    const items = this.ownIds(p.queue, p.items);
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
    this.announce(items.mine.map((c) => c.jobId), results);
    const outcomes = items.merge(results);
    outcomes.forEach((o, i) => {
      const c = p.items[i]!;
      if (o.outcome === "acknowledged" && !c.moveToPending) o.claimExpiresAt = now + (c.extendClaimByMs ?? config.claimTimeoutMs);
    });
    return outcomes;
  }

  /** Jobs started for a caller that did not get them: back to pending at once, charging nothing. */
  async releaseUndelivered(jobs: Array<Pick<JobRecord, "id" | "claimToken">>): Promise<void> {
    const now = this.clock.now();
    const results = await this.store.jobCheckpointMany({
      items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, claimExpiresAt: 0, moveToPending: true, runAfter: now, attemptsAllowed: 0, customStatus: "" })),
      now,
    });
    this.announce(jobs.map((j) => j.id), results);
  }

  /**
   * Called by maintenance after the claim-timeout sweep: jobs back to pending are due
   * again, and a job that failed for good let the next job of its ordering key go.
   */
  announcePending(jobs: JobRecord[]): void {
    for (const job of jobs) {
      if (job.state === "pending") this.broker.notify(job.queue, job.partition, job.runAfter, job.priority);
      else if (job.state === "failed" && job.orderingKey !== "") this.broker.notify(job.queue, job.partition, this.clock.now());
    }
  }

  // ---- helpers

  private async queueRecord(name: string, field: string, fresh = false): Promise<QueueRecord> {
    validateQueueName(name, field);
    const now = this.clock.now();
    const cached = this.queueCache.get(name);
    if (!fresh && cached && now - cached.at < QUEUE_CACHE_MS) return cached.record;
    const record = await this.store.queueGet({ name });
    if (!record) {
      this.queueCache.delete(name);
      throw queueNotFound(name, field);
    }
    this.queueCache.set(name, { record, at: now });
    return record;
  }

  private async view(queue: QueueRecord): Promise<QueueView> {
    return { queue, stats: await this.store.queueStats({ name: queue.name, now: this.clock.now() }) };
  }

  private newJob(spec: JobSpecInput, config: QueueConfig, i: number, now: number): NewJob {
    const priority = spec.priority || 1;
    checkPriority(priority, config, `jobs[${i}].priority`, false);
    if (spec.body.length > config.maxBodyBytes) throw bodyTooLarge(`jobs[${i}].body`, spec.body.length, config.maxBodyBytes);
    checkAttempts(spec.attemptsAllowed, `jobs[${i}].attempts_allowed`);
    if (spec.idempotencyKey.length > limits.idempotencyKeyMaxLength) {
      throw invalidArgument(`jobs[${i}].idempotency_key`, `idempotency_key is longer than ${limits.idempotencyKeyMaxLength} characters`);
    }
    const orderingKey = storedOrderingKey(spec.orderingKey ?? "", config, `jobs[${i}].ordering_key`);
    const partition = this.pickPartition(spec.queue, orderingKey || spec.idempotencyKey, config);
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

  /**
   * Jobs sharing an ordering key share a partition, where the store keeps their sequence;
   * so do jobs sharing an idempotency key, so the store can dedupe them. `key` is the
   * ordering key when there is one, else the idempotency key: with both, idempotency
   * dedupes among the jobs that land on the ordering key's partition.
   */
  private pickPartition(queue: string, key: string, config: QueueConfig): number {
    if (config.partitions === 1) return 0;
    // Over the partitions the queue was created with: growing a queue never splits a key's jobs.
    if (key !== "") return createHash("sha1").update(key).digest().readUInt32BE(0) % (config.keyPartitions ?? config.partitions);
    const next = ((this.roundRobin.get(queue) ?? -1) + 1) % config.partitions;
    this.roundRobin.set(queue, next);
    return next;
  }

  /** Splits items into those whose id belongs to `queue` and the rest (reported not_found). */
  private ownIds<T extends { jobId: string }>(queue: string, items: T[]) {
    const mine: T[] = [];
    const positions: number[] = [];
    items.forEach((item, i) => {
      if (parseJobId(item.jobId)?.queue === queue) {
        mine.push(item);
        positions.push(i);
      }
    });
    return {
      mine,
      merge(results: OutcomeResult[]): JobOutcome[] {
        const outcomes: JobOutcome[] = items.map((item) => ({ jobId: item.jobId, outcome: "not_found" }));
        results.forEach((r, k) => {
          outcomes[positions[k]!]!.outcome = r.outcome;
        });
        return outcomes;
      },
    };
  }

  /** One announcement per partition: its earliest due time and best priority. */
  private announceInserted(jobs: NewJob[]): void {
    const best = new Map<string, { queue: string; partition: number; dueAt: number; priority: number }>();
    for (const job of jobs) {
      const key = `${job.queue}/${job.partition}`;
      const b = best.get(key);
      if (!b) best.set(key, { queue: job.queue, partition: job.partition, dueAt: job.runAfter, priority: job.priority });
      else {
        b.dueAt = Math.min(b.dueAt, job.runAfter);
        b.priority = Math.min(b.priority, job.priority);
      }
    }
    for (const b of best.values()) this.broker.notify(b.queue, b.partition, b.dueAt, b.priority);
  }

  /** Jobs that went back to pending, and jobs promoted behind an ordering key's finished head. */
  private announce(ids: string[], results: OutcomeResult[]): void {
    results.forEach((r, i) => {
      if (r.pendingAt === undefined && r.promotedAt === undefined) return;
      const where = parseJobId(ids[i]!);
      if (!where) return;
      if (r.pendingAt !== undefined) this.broker.notify(where.queue, where.partition, r.pendingAt);
      if (r.promotedAt !== undefined) this.broker.notify(where.queue, where.partition, r.promotedAt);
    });
  }
}

function checkPriority(priority: number, config: QueueConfig, field: string, zeroMeansAll: boolean): void {
  if (zeroMeansAll && priority === 0) return;
  if (!Number.isInteger(priority) || priority < 1 || priority > config.priorities) {
    throw new RunlaterError(
      "invalid_argument",
      "INVALID_PRIORITY",
      `${field} is ${priority}; this queue has priorities 1 (highest) to ${config.priorities}`,
      field,
    );
  }
}

function checkAttempts(attempts: number, field: string): void {
  if (attempts < 0 || attempts > limits.attemptsMax) throw invalidArgument(field, `${field} must be 0 (the default) to ${limits.attemptsMax}`);
}

function bodyTooLarge(field: string, size: number, max: number): RunlaterError {
  return new RunlaterError("resource_exhausted", "BODY_TOO_LARGE", `${field} is ${size} bytes; this queue accepts at most ${max} (max_body_bytes)`, field);
}

function boundedLimit(value: number, fallback: number, max: number, field: string): number {
  if (value === 0) return fallback;
  if (value > max) {
    throw new RunlaterError("resource_exhausted", "BATCH_TOO_LARGE", `${field} ${value} is above the maximum ${max}: ask for ${max} or fewer`, field);
  }
  return value;
}

function truncateStatus(status: string): string {
  return appendStatus("", status);
}

function toFilter(input: FilterInput): JobFilter {
  let bodyRegex: RegExp | undefined;
  if (input.bodyRegex !== "") {
    if (input.bodyRegex.length > limits.bodyRegexMaxLength) throw invalidArgument("body_regex", `body_regex is longer than ${limits.bodyRegexMaxLength} characters`);
    try {
      bodyRegex = new RegExp(input.bodyRegex, "u");
    } catch (err) {
      throw invalidArgument("body_regex", `body_regex is not a valid regular expression: ${(err as Error).message}`);
    }
  }
  return { state: input.state, priority: input.priority || undefined, future: input.future, bodyRegex };
}

function encodeCursor(c: ScanCursor): string {
  return Buffer.from(JSON.stringify([c.runAfter, c.id])).toString("base64url");
}

function decodeCursor(token: string): ScanCursor {
  try {
    const [runAfter, id] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof runAfter === "number" && typeof id === "string") return { runAfter, id };
  } catch {
    // fall through
  }
  throw invalidArgument("page_token", "page_token is not one this server issued: pass next_page_token unchanged");
}

/** How many bodies of these sizes, from the first, fit `maxBytes`; at least one (if any). */
function fitting(sizes: number[], maxBytes: number): number {
  const fits = byteBudget(maxBytes);
  const first = sizes.findIndex((size) => !fits(size));
  return first === -1 ? sizes.length : first;
}
