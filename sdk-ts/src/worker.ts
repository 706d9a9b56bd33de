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
import type { RunlaterClient } from "./client.js";
import { DoNotRetry, RetryAfter } from "./control.js";
import {
  type DequeuedJob,
  type DequeueResponse,
  type JobCheckpointSchema,
  Outcome,
} from "./gen/runlater/v1/worker_service_pb.js";
import type { RetryPolicy } from "./retry.js";
import { AckBatcher } from "./worker/ack-batcher.js";
import { Backoff, sleep } from "./worker/backoff.js";
import { ClaimKeeper } from "./worker/claim-keeper.js";
import { deliver } from "./worker/deliver.js";
import { type JobOutcome, outcomeOfError, outcomeOfResult } from "./worker/outcome.js";
import { StreamPuller } from "./worker/stream-puller.js";
import type { WorkerErrorContext, WorkerErrorHandler } from "./worker/types.js";
import { type JobHandler, toWorkerJob } from "./worker/worker-job.js";

export interface WorkerOptions {
  client: RunlaterClient;
  /** The queue to work on (it must exist). */
  queue: string;
  handler: JobHandler;
  /** Handlers running at once; default 10. */
  concurrency?: number;
  /**
   * Jobs asked for per Dequeue; default = concurrency. A batch larger than concurrency
   * prefetches: the extra jobs wait in the worker (their claims kept alive) until a slot
   * frees. A batch of half the concurrency or less keeps several Dequeue calls in flight
   * (up to concurrency / batchSize, at most 4), each asking only for free slots. In stream
   * mode the worker grants credits for its free slots once half a batch of them is free.
   */
  batchSize?: number;
  /**
   * "stream": one DequeueStream carries jobs and outcomes (needs a client over HTTP/2 with
   * Connect or gRPC; saves a request per batch). "poll": Dequeue calls, acks piggy-backed
   * on them. Default "stream" when the client can stream, else "poll".
   */
  dequeueMode?: "stream" | "poll";
  /** Poll mode: long-poll wait of each Dequeue when nothing is due; default 20 s (the server caps it at 60 s). */
  pollWaitMs?: number;
  /** Delay before retrying a job whose handler threw; unset lets the queue's retry policy decide. */
  retryPolicy?: RetryPolicy;
  /** Renew claims of jobs that run long (default true). */
  claimExtension?: boolean;
  /** How long stop() lets running handlers finish before releasing their jobs; default 30 s. */
  shutdownGraceMs?: number;
  /** How long an outcome may wait for a Dequeue to carry it before an Ack call sends it; default 5 ms. */
  ackFlushDelayMs?: number;
  /** Names this worker in server logs; default host:pid:random. */
  workerId?: string;
  /** Told about every problem the worker handles by itself; default logs to console.error. */
  onError?: WorkerErrorHandler;
}

interface Running {
  job: DequeuedJob;
  controller: AbortController;
  /** Its result is no longer ours to report: released at shutdown, or the claim was lost. */
  abandoned: boolean;
}

/** Room left for the answer to travel back after the long poll ends. */
const DEQUEUE_DEADLINE_MARGIN_MS = 10_000;
/** After the grace period, how long stop() still tries to deliver releases and acks. */
const FINAL_DELIVERY_MS = 10_000;

export class Worker {
  private readonly queue: string;
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
  private buffered: DequeuedJob[] = [];
  /** Jobs asked for by the Dequeue calls in flight: spoken-for slots. */
  private requested = 0;
  private readonly running = new Map<string, Running>();
  /** Snoozes and releases on their way to the server; stop() waits for them. */
  private readonly writes = new Set<Promise<unknown>>();
  private waiters: Array<() => void> = [];

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
    this.concurrency = positiveInt("concurrency", o.concurrency ?? 10);
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
    this.pollWaitMs = nonNegative("pollWaitMs", o.pollWaitMs ?? 20_000);
    this.graceMs = nonNegative("shutdownGraceMs", o.shutdownGraceMs ?? 30_000);
    this.workerId = o.workerId ?? `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
    this.onError =
      o.onError ??
      ((err, ctx) => console.error(`runlater worker [${ctx.op}${ctx.jobId ? ` ${ctx.jobId}` : ""}]:`, err));
    this.acks = new AckBatcher({
      queue: this.queue,
      worker: o.client.worker,
      flushDelayMs: nonNegative("ackFlushDelayMs", o.ackFlushDelayMs ?? 5),
      onError: this.onError,
    });
    const mode = o.dequeueMode ?? (o.client.streams ? "stream" : "poll");
    if (mode === "stream" && !o.client.streams) {
      throw new Error(
        'dequeueMode "stream" needs a client over HTTP/2 with protocol "connect" or "grpc" (httpVersion "2")',
      );
    }
    if (mode === "stream") {
      const puller = new StreamPuller({
        queue: this.queue,
        workerId: this.workerId,
        worker: o.client.worker,
        acks: this.acks,
        freeSlots: () => this.capacity - this.running.size - this.buffered.length,
        refillAt: this.refillAt,
        received: (jobs, receivedAt) => this.received(jobs, receivedAt),
        stopTimeoutMs: FINAL_DELIVERY_MS,
        onError: this.onError,
      });
      this.acks.carrier = () => puller.carryAcks();
      this.streamPuller = puller;
    }
    this.claims =
      (o.claimExtension ?? true)
        ? new ClaimKeeper({
            queue: this.queue,
            worker: o.client.worker,
            onError: this.onError,
            onLost: (id) => this.claimLost(id),
          })
        : undefined;
  }

  /** Starts taking jobs (idempotent). */
  start(): void {
    if (this.stopping) throw new Error("this worker was stopped; create a new one");
    this.loop ??= this.streamPuller
      ? this.streamPuller.run(this.stopController.signal)
      : Promise.all(Array.from({ length: this.pullers }, () => this.dequeueLoop())).then(() => undefined);
  }

  /** Starts the worker and resolves once it has stopped (after stop() completes). */
  run(): Promise<void> {
    this.start();
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
        res = await this.o.client.worker.dequeue(
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
      this.received(res.jobs, Date.now());
    }
  }

  /** Jobs handed to this worker: keep their claims, start what fits. */
  private received(jobs: DequeuedJob[], receivedAt: number): void {
    for (const job of jobs) {
      if (job.claimExpiresAt)
        this.claims?.track(job.jobId, job.claimToken, timestampMs(job.claimExpiresAt), receivedAt);
      this.buffered.push(job);
    }
    this.pump();
    this.notify(); // a puller waiting for room sees this call's slots come back
  }

  /** Starts buffered jobs while there are free slots. */
  private pump(): void {
    while (!this.stopping && this.running.size < this.concurrency) {
      const job = this.buffered.shift();
      if (!job) return;
      const run: Running = { job, controller: new AbortController(), abandoned: false };
      this.running.set(job.jobId, run);
      void this.execute(run);
    }
  }

  private async execute(run: Running): Promise<void> {
    let outcome: JobOutcome;
    try {
      outcome = outcomeOfResult(await this.o.handler(toWorkerJob(run.job, run.controller.signal)));
    } catch (err) {
      outcome = outcomeOfError(err, run.job.attempt, this.o.retryPolicy);
      // RetryAfter and DoNotRetry are decisions, not accidents: no need to shout.
      if (!(err instanceof RetryAfter) && !(err instanceof DoNotRetry))
        this.onError(err, { op: "handler", jobId: run.job.jobId });
    }
    if (this.running.get(run.job.jobId) === run) this.running.delete(run.job.jobId);
    if (!run.abandoned) {
      this.claims?.untrack(run.job.jobId);
      this.report(run.job, outcome);
    }
    this.notify();
    this.pump();
  }

  private report(job: DequeuedJob, outcome: JobOutcome): void {
    const ids = { jobId: job.jobId, claimToken: job.claimToken };
    switch (outcome.kind) {
      case "success":
        this.acks.succeed({ ...ids, customStatus: outcome.customStatus });
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
              runAfter: timestampFromMs(Date.now() + outcome.delayMs),
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
      const write = deliver(() => this.o.client.worker.checkpoint({ queue: this.queue, checkpoints: chunk }), {
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

  private release(jobs: DequeuedJob[]): void {
    for (const job of jobs) this.claims?.untrack(job.jobId);
    if (jobs.length > 0)
      this.checkpoint(
        jobs.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken, moveToPending: true })),
        "release",
      );
  }

  /** The server gave the claim away: stop the handler if it listens, drop the job. */
  private claimLost(jobId: string): void {
    const run = this.running.get(jobId);
    if (run) {
      run.abandoned = true;
      run.controller.abort(new Error(`claim on job ${jobId} was lost; another worker may be running it`));
    }
    this.buffered = this.buffered.filter((j) => j.jobId !== jobId);
    this.notify();
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.stopController.abort(); // ends a long poll in flight and any backoff sleep
    this.notify();
    await this.loop;
    // Jobs not started yet go back at once so another worker can take them now.
    this.release(this.buffered.splice(0));

    const graceEnds = Date.now() + this.graceMs;
    while (this.running.size > 0 && Date.now() < graceEnds) {
      const timeout = new AbortController();
      await Promise.race([this.changed(), sleep(graceEnds - Date.now(), timeout.signal)]);
      timeout.abort();
    }
    if (this.running.size > 0) {
      const late = [...this.running.values()];
      for (const run of late) {
        run.abandoned = true;
        run.controller.abort(new Error("worker stopped and the shutdown grace period ran out"));
      }
      this.running.clear();
      this.release(late.map((r) => r.job));
    }

    this.giveUpAt = Date.now() + FINAL_DELIVERY_MS;
    this.acks.giveUpAt = this.giveUpAt;
    await Promise.all([this.acks.flush(), ...this.writes]);
    this.acks.close();
    this.claims?.close();
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

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a finite number ≥ 0, got ${value}`);
  return value;
}
