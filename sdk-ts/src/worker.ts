/**
 * Worker: takes jobs of one queue, runs a handler on each with bounded concurrency, and
 * reports the outcomes, in the PinLater way: jobs come in batches by long-polling
 * Dequeue, outcomes ride back on the next Dequeue (or a batched Ack when none is coming
 * soon), long jobs keep their claims alive by themselves, and stop() is graceful.
 *
 * Over HTTP/2 (Connect or gRPC) it takes jobs over one DequeueStream instead, granting
 * credits as slots free up and sending outcomes on the same stream (dequeueMode).
 *
 * The parts live in ./worker/: ack-batcher (outcome batching and delivery), stream-puller
 * (the DequeueStream side), claim-keeper (claim renewal), outcome (the handler
 * control-flow vocabulary), deliver (retry with backoff for calls whose result must not
 * be lost).
 */
import { hostname } from "node:os";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { durationFromMs, timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { createRunlaterClient, type RunlaterClient } from "./client.js";
import { DoNotRetry, RetryAfter } from "./control.js";
import {
  type DequeuedJob,
  type DequeueResponse,
  type JobCheckpointSchema,
  Outcome,
} from "./gen/runlater/v1/worker_service_pb.js";
import type { RetryPolicy } from "./retry.js";
import { SlotTable } from "./slot-table.js";
import { runTraced } from "./tracing.js";
import { AckBatcher } from "./worker/ack-batcher.js";
import { Backoff, sleep } from "./worker/backoff.js";
import { ClaimKeeper, type KeptClaim } from "./worker/claim-keeper.js";
import { workerDefaults } from "./worker/defaults.js";
import { deliver } from "./worker/deliver.js";
import { rawStreamClient } from "./worker/dequeued-codec.js";
import { type JobOutcome, outcomeOfError, outcomeOfResult } from "./worker/outcome.js";
import { StreamPuller } from "./worker/stream-puller.js";
import type { WorkerErrorContext, WorkerErrorHandler } from "./worker/types.js";
import { type JobHandler, toWorkerJob } from "./worker/worker-job.js";

export interface WorkerOptions {
  /**
   * The client to call the server with. A default client over http:// is on HTTP/2
   * already and the worker streams on it. One on HTTP/1.1 that did not name the version
   * (an https:// URL; not gRPC-Web, and unless dequeueMode is "poll") gets the worker its
   * own HTTP/2 session to the same server with the same options, so that it can stream;
   * it closes it on stop.
   */
  client: RunlaterClient;
  /** The queue to work on (it must exist: start() fails otherwise). */
  queue: string;
  handler: JobHandler;
  /** Handlers running at once; default 100 (docs/workers.md). */
  concurrency?: number;
  /**
   * Jobs asked for per Dequeue, or credits granted at most per stream message; default =
   * concurrency. A batch larger than concurrency prefetches: the extra jobs wait in the
   * worker (their claims kept alive) until a slot frees. A batch of half the concurrency
   * or less keeps several Dequeue calls in flight (up to concurrency / batchSize, at most
   * 4), each asking only for free slots. In stream mode the worker grants credits for its
   * free slots once half a batch of them is free.
   */
  batchSize?: number;
  /**
   * "stream": one DequeueStream carries jobs and outcomes (HTTP/2 with Connect or gRPC;
   * saves a request per batch). "poll": Dequeue calls, acks piggy-backed on them.
   * Default "stream" wherever the transport allows (see `client`), else "poll".
   */
  dequeueMode?: "stream" | "poll";
  /** Poll mode: long-poll wait of each Dequeue when nothing is due; default 20 s (the server caps it at 60 s). */
  pollWaitMs?: number;
  /** Delay before retrying a job whose handler threw; unset lets the queue's retry policy decide. */
  retryPolicy?: RetryPolicy;
  /** Renew claims of jobs that run long (default true). */
  claimExtension?: boolean;
  /** How long stop() lets running handlers finish before releasing their jobs; default 25 s. */
  shutdownGraceMs?: number;
  /** Longest time a finished job's outcome waits to share a message with others; default 5 ms. */
  ackDelayMs?: number;
  /** Names this worker in server logs; default host:pid:random. */
  workerId?: string;
  /**
   * Told about every problem the worker handles by itself; default: console.warn, with
   * the stack of a handler's error (once per failed attempt).
   */
  onError?: WorkerErrorHandler;
  /**
   * The wall clock (epoch ms) the worker reads the server's claim expiries against and
   * computes snooze due times with; default Date.now. Timers run on the monotonic clock
   * whatever this says. Tests against a server on a manual clock pass that clock here.
   */
  clock?: () => number;
}

/** A Worker's effective settings: its options with the defaults filled in. */
export interface WorkerSettings {
  concurrency: number;
  batchSize: number;
  dequeueMode: "stream" | "poll";
  pollWaitMs: number;
  shutdownGraceMs: number;
  ackDelayMs: number;
  claimExtension: boolean;
  workerId: string;
}

/** A job this worker holds, and its claim while the claim keeper keeps it. */
interface Held {
  job: DequeuedJob;
  claim: KeptClaim | undefined;
}

interface Running extends Held {
  /** Where `running` keeps it. */
  slot: number;
  controller: AbortController;
  /** Its result is no longer ours to report: released at shutdown, or the claim was lost. */
  abandoned: boolean;
}

/** Room left for the answer to travel back after the long poll ends. */
const DEQUEUE_DEADLINE_MARGIN_MS = 10_000;
/** After the grace period, how long stop() still tries to deliver releases and acks. */
const FINAL_DELIVERY_MS = 10_000;
/** How long start() waits for the server to say whether the queue exists. */
const START_CHECK_TIMEOUT_MS = 10_000;
/** The longest custom status a failure reports (the server keeps 1,000 characters in all). */
const MAX_STATUS_CHARS = 500;

export class Worker {
  /** The worker's settings, defaults filled in. */
  readonly settings: Readonly<WorkerSettings>;
  private readonly queue: string;
  private readonly client: RunlaterClient;
  /** The worker opened `client` itself (its own HTTP/2 session) and closes it on stop. */
  private readonly ownsClient: boolean;
  private readonly clock: () => number;
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly capacity: number;
  private readonly refillAt: number;
  /** Dequeue calls that may be in flight at once (see the constructor). */
  private readonly pullers: number;
  private readonly pollWaitMs: number;
  private readonly graceMs: number;
  private readonly workerId: string;
  private readonly onError: WorkerErrorHandler;
  private readonly acks: AckBatcher;
  private readonly claims: ClaimKeeper | undefined;
  /** Set in stream mode. */
  private readonly streamPuller: StreamPuller | undefined;

  /** Dequeued, not yet started (only when batchSize > concurrency, or while stopping). */
  private buffered: Held[] = [];
  /** Jobs asked for by the Dequeue calls in flight: spoken-for slots. */
  private requested = 0;
  private readonly running = new SlotTable<Running>();
  /** Snoozes and releases on their way to the server; stop() waits for them. */
  private readonly writes = new Set<Promise<unknown>>();
  private waiters: Array<() => void> = [];

  /** start()'s check of the queue, then the pullers' start. */
  private starting: Promise<void> | undefined;
  private loop: Promise<void> | undefined;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private readonly stopController = new AbortController();
  private resolveDone!: () => void;
  private readonly done = new Promise<void>((resolve) => {
    this.resolveDone = resolve;
  });
  /** Latest time deliveries are retried; finite only once the grace period is over. */
  private giveUpAt = Number.POSITIVE_INFINITY;

  constructor(private readonly o: WorkerOptions) {
    this.queue = o.queue;
    this.clock = o.clock ?? Date.now;
    this.concurrency = positiveInt("concurrency", o.concurrency ?? workerDefaults.concurrency);
    this.batchSize = positiveInt("batchSize", o.batchSize ?? Math.min(this.concurrency, 1000));
    if (this.batchSize > 1000) throw new RangeError("batchSize must be at most 1000 (the server's Dequeue limit)");
    this.capacity = Math.max(this.concurrency, this.batchSize);
    // Ask again once half a batch worth of room is free: fewer, fuller Dequeue calls
    // than asking for every single freed slot, without leaving slots idle for long.
    this.refillAt = Math.max(1, Math.ceil(this.batchSize / 2));
    // With room for several batches (concurrency well above batchSize), one Dequeue at a
    // time would leave slots idle while each call travels: keep up to that many calls in
    // flight (at most 4), never asking for more jobs than there are free slots.
    this.pullers = Math.max(1, Math.min(4, Math.floor(this.capacity / this.batchSize)));
    this.pollWaitMs = timerMs("pollWaitMs", o.pollWaitMs ?? workerDefaults.pollWaitMs);
    this.graceMs = timerMs("shutdownGraceMs", o.shutdownGraceMs ?? workerDefaults.shutdownGraceMs);
    const ackDelayMs = timerMs("ackDelayMs", o.ackDelayMs ?? workerDefaults.ackDelayMs);
    this.workerId = o.workerId ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
    this.onError = o.onError ?? warn(this.queue);

    const given = o.client;
    const protocol = given.options.protocol ?? "connect";
    // Like the Python SDK's worker: a client on HTTP/1.1 that left the HTTP version open
    // (https://) gets the worker its own HTTP/2 session, so that it can stream.
    this.ownsClient =
      !given.streams && given.options.httpVersion === undefined && protocol !== "grpc-web" && o.dequeueMode !== "poll";
    this.client = this.ownsClient ? createRunlaterClient(given.baseUrl, { ...given.options, httpVersion: "2" }) : given;
    const mode = o.dequeueMode ?? (this.client.streams ? "stream" : "poll");
    if (mode === "stream" && !this.client.streams) {
      throw new Error(
        'dequeueMode "stream" needs a client over HTTP/2 with protocol "connect" or "grpc" (httpVersion "2", or none)',
      );
    }
    this.acks = new AckBatcher({
      queue: this.queue,
      worker: this.client.worker,
      flushDelayMs: ackDelayMs,
      onError: this.onError,
    });
    if (mode === "stream") {
      const puller = new StreamPuller({
        queue: this.queue,
        workerId: this.workerId,
        worker: this.client.worker,
        rawWorker: rawStreamClient(this.client),
        acks: this.acks,
        freeSlots: () => this.capacity - this.running.size - this.buffered.length,
        refillAt: this.refillAt,
        received: (jobs) => this.received(jobs),
        stopTimeoutMs: FINAL_DELIVERY_MS,
        onError: this.onError,
      });
      this.acks.carrier = () => puller.carryAcks();
      this.streamPuller = puller;
    }
    const claimExtension = o.claimExtension ?? true;
    this.claims = claimExtension
      ? new ClaimKeeper({
          queue: this.queue,
          worker: this.client.worker,
          clock: this.clock,
          onError: this.onError,
          onLost: (id) => this.claimLost(id),
        })
      : undefined;
    this.settings = Object.freeze({
      concurrency: this.concurrency,
      batchSize: this.batchSize,
      dequeueMode: mode,
      pollWaitMs: this.pollWaitMs,
      shutdownGraceMs: this.graceMs,
      ackDelayMs,
      claimExtension,
      workerId: this.workerId,
    });
  }

  /**
   * Starts taking jobs. Resolves once the server has said the queue exists; rejects
   * (a ConnectError: not_found for a missing queue, unavailable for a server that is not
   * there, naming the queue and the server) without taking any job otherwise, so a
   * misconfigured worker fails at once instead of retrying forever. Once started, a
   * server that goes away is retried with backoff (each failure goes to onError).
   * Calling it again returns the same promise (or tries again after a failure).
   */
  start(): Promise<void> {
    if (this.stopping) return Promise.reject(new Error("this worker was stopped; create a new one"));
    this.starting ??= this.begin().catch((err: unknown) => {
      this.starting = undefined;
      throw err;
    });
    return this.starting;
  }

  private async begin(): Promise<void> {
    try {
      await this.client.queues.getQueue({ name: this.queue }, { timeoutMs: START_CHECK_TIMEOUT_MS });
    } catch (err) {
      // Its own session must not keep the process alive (a later start() opens another).
      if (this.ownsClient) this.client.close();
      throw startError(err, this.queue, this.client.baseUrl);
    }
    if (this.stopping) return;
    this.loop = this.streamPuller
      ? this.streamPuller.run(this.stopController.signal)
      : Promise.all(Array.from({ length: this.pullers }, () => this.dequeueLoop())).then(() => undefined);
  }

  /** Starts the worker (see start()) and resolves once it has stopped (after stop() completes). */
  async run(): Promise<void> {
    await this.start();
    return this.done;
  }

  /**
   * Graceful stop: no more dequeuing; jobs not yet started are released at once; running
   * handlers get shutdownGraceMs to finish, then their signals abort and their jobs are
   * released too (back to PENDING, no attempt charged); pending outcomes are flushed.
   */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  /** Handlers running right now. */
  get active(): number {
    return this.running.size;
  }

  private async dequeueLoop(): Promise<void> {
    const backoff = new Backoff();
    while (!this.stopping) {
      const held = this.running.size + this.buffered.length + this.requested;
      if (held > 0 && this.capacity - held < this.refillAt) {
        await this.changed();
        continue;
      }
      const ack = this.acks.take();
      // A Dequeue that carries outcomes does not long-poll: its answer confirms them
      // now, and a long poll cut short by stop() would leave it unknown whether they
      // were applied (they would have to be sent again, to come back STALE_CLAIM).
      const waitMs = ack ? 0 : this.pollWaitMs;
      const limit = Math.min(this.batchSize, this.capacity - held);
      let res: DequeueResponse;
      this.requested += limit;
      try {
        res = await this.client.worker.dequeue(
          { queue: this.queue, limit, wait: durationFromMs(waitMs), workerId: this.workerId, ack },
          { signal: ack ? undefined : this.stopController.signal, timeoutMs: waitMs + DEQUEUE_DEADLINE_MARGIN_MS },
        );
      } catch (err) {
        this.requested -= limit;
        this.notify();
        // The server may or may not have applied the piggy-backed ack: send it again
        // (a repeat is harmless, it comes back STALE_CLAIM).
        if (ack) this.acks.restore(ack);
        if (this.stopping) break;
        this.onError(err, { op: "dequeue" });
        await sleep(backoff.next(), this.stopController.signal);
        continue;
      }
      this.requested -= limit;
      backoff.reset();
      if (ack) this.acks.checkResults(ack, res.ack);
      this.received(res.jobs);
    }
  }

  /** Jobs handed to this worker: keep their claims, start what fits. */
  private received(jobs: DequeuedJob[]): void {
    for (const job of jobs) {
      const claim = job.claimExpiresAt
        ? this.claims?.track(job.jobId, job.claimToken, timestampMs(job.claimExpiresAt))
        : undefined;
      this.buffered.push({ job, claim });
    }
    this.pump();
    this.notify(); // a puller waiting for room sees this call's slots come back
  }

  /** Starts buffered jobs while there are free slots. */
  private pump(): void {
    while (!this.stopping && this.running.size < this.concurrency) {
      const held = this.buffered.shift();
      if (!held) return;
      const run: Running = { ...held, slot: 0, controller: new AbortController(), abandoned: false };
      run.slot = this.running.add(run);
      void this.execute(run);
    }
  }

  private async execute(run: Running): Promise<void> {
    let outcome: JobOutcome;
    try {
      // Inside the try: an output out of bounds fails the attempt, naming the bound.
      const job = run.job;
      const traced = { queue: this.queue, jobId: job.jobId, attempt: job.attempt, traceparent: job.traceparent };
      outcome = outcomeOfResult(await runTraced(traced, () => this.o.handler(toWorkerJob(job, run.controller.signal))));
    } catch (err) {
      outcome = outcomeOfError(err, run.job.attempt, this.o.retryPolicy, MAX_STATUS_CHARS);
      // RetryAfter and DoNotRetry are decisions, not accidents: no need to shout.
      if (!(err instanceof RetryAfter) && !(err instanceof DoNotRetry))
        this.onError(err, {
          op: "handler",
          jobId: run.job.jobId,
          attempt: run.job.attempt,
          attemptsAllowed: run.job.attemptsAllowed,
        });
    }
    this.running.remove(run.slot, run);
    if (!run.abandoned) {
      if (run.claim) this.claims?.untrack(run.claim);
      this.report(run.job, outcome);
    }
    this.notify();
    this.pump();
  }

  private report(job: DequeuedJob, outcome: JobOutcome): void {
    const ids = { jobId: job.jobId, claimToken: job.claimToken };
    switch (outcome.kind) {
      case "success":
        this.acks.succeed({
          ...ids,
          customStatus: outcome.customStatus,
          result: outcome.result,
          noEvents: outcome.noEvents,
        });
        return;
      case "failure":
        this.acks.fail({
          ...ids,
          customStatus: outcome.customStatus,
          retryDelay: outcome.retryDelayMs === undefined ? undefined : durationFromMs(outcome.retryDelayMs),
          noRetry: outcome.noRetry,
        });
        return;
      case "snooze":
        this.checkpoint(
          [
            {
              ...ids,
              moveToPending: true,
              runAfter: timestampFromMs(this.clock() + outcome.delayMs),
              customStatus: outcome.customStatus,
            },
          ],
          "snooze",
        );
        return;
    }
  }

  /** Sends checkpoints (snoozes, releases) with retries; stop() waits for them. */
  private checkpoint(
    checkpoints: Array<MessageInitShape<typeof JobCheckpointSchema>>,
    op: WorkerErrorContext["op"],
  ): void {
    for (let i = 0; i < checkpoints.length; i += 1000) {
      const chunk = checkpoints.slice(i, i + 1000);
      const write = deliver(() => this.client.worker.checkpoint({ queue: this.queue, checkpoints: chunk }), {
        onError: this.onError,
        context: { op },
        giveUpAt: () => this.giveUpAt,
      }).then((res) => {
        res?.results.forEach((r) => {
          if (r.outcome !== Outcome.ACKNOWLEDGED)
            this.onError(new Error(`${op} of job ${r.jobId} refused: ${Outcome[r.outcome]}`), { op, jobId: r.jobId });
        });
      });
      this.writes.add(write);
      void write.finally(() => this.writes.delete(write));
    }
  }

  private release(held: Held[]): void {
    for (const { claim } of held) if (claim) this.claims?.untrack(claim);
    if (held.length > 0)
      this.checkpoint(
        held.map(({ job }) => ({ jobId: job.jobId, claimToken: job.claimToken, moveToPending: true })),
        "release",
      );
  }

  /** The server gave the claim away: stop the handler if it listens, drop the job. */
  private claimLost(jobId: string): void {
    const run = this.running.find((r) => r.job.jobId === jobId);
    if (run) {
      run.abandoned = true;
      run.controller.abort(new Error(`claim on job ${jobId} was lost; another worker may be running it`));
    }
    this.buffered = this.buffered.filter((h) => h.job.jobId !== jobId);
    this.notify();
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.stopController.abort(); // ends a long poll in flight and any backoff sleep
    this.notify();
    await this.starting?.catch(() => undefined);
    await this.loop;
    // Jobs not started yet go back at once so another worker can take them now.
    this.release(this.buffered.splice(0));

    const graceEnds = performance.now() + this.graceMs;
    while (this.running.size > 0 && performance.now() < graceEnds) {
      const timeout = new AbortController();
      await Promise.race([this.changed(), sleep(graceEnds - performance.now(), timeout.signal)]);
      timeout.abort();
    }
    if (this.running.size > 0) {
      const late = this.running.values();
      for (const run of late) {
        run.abandoned = true;
        run.controller.abort(new Error("worker stopped and the shutdown grace period ran out"));
      }
      this.running.clear();
      this.release(late);
    }

    this.giveUpAt = Date.now() + FINAL_DELIVERY_MS;
    this.acks.giveUpAt = this.giveUpAt;
    await Promise.all([this.acks.flush(), ...this.writes]);
    this.acks.close();
    this.claims?.close();
    if (this.ownsClient) this.client.close();
    this.resolveDone();
  }

  /** Resolves at the next change worth re-checking (a job finished, stop was called). */
  private changed(): Promise<void> {
    return new Promise<void>((resolve) => this.waiters.push(resolve)).then(
      // Let handlers that finished in the same tick report too, so one Dequeue carries
      // all their outcomes.
      () => new Promise<void>((resolve) => setImmediate(resolve)),
    );
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
    this.streamPuller?.poke();
  }
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a whole number ≥ 1, got ${value}`);
  return value;
}

/** Node's timers fire at once past 2^31 - 1 ms (about 24.8 days): a longer wait would silently be none. */
const TIMER_MAX_MS = 2 ** 31 - 1;

/** A duration the worker sets a timer for: 0 to TIMER_MAX_MS. */
function timerMs(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0 || value > TIMER_MAX_MS)
    throw new RangeError(
      `${name} must be a number of milliseconds from 0 to ${TIMER_MAX_MS} (about 24.8 days), got ${value}`,
    );
  return value;
}

/**
 * The default onError: one console.warn per problem. A handler's error is logged once
 * per failed attempt, with its stack (as the Python and Java workers log it at WARNING).
 */
function warn(queue: string): WorkerErrorHandler {
  return (err, ctx) => {
    if (ctx.op === "handler")
      console.warn(
        `runlater worker: job ${ctx.jobId} of ${queue} failed (attempt ${ctx.attempt} of ${ctx.attemptsAllowed}):`,
        err,
      );
    else console.warn(`runlater worker [${ctx.op}${ctx.jobId ? ` ${ctx.jobId}` : ""}] on ${queue}:`, err);
  };
}

/** start()'s error: the server's code and details, with the queue and the server named. */
function startError(err: unknown, queue: string, baseUrl: string): unknown {
  if (!(err instanceof ConnectError)) return err;
  const named = new ConnectError(
    `worker cannot start on queue "${queue}" at ${baseUrl}: ${err.rawMessage}`,
    err.code,
    err.metadata,
    undefined,
    err,
  );
  named.details.push(...err.details); // errorInfo() reads the reason from these
  return named;
}
