/**
 * WorkerService.DequeueStream: one worker's long-lived stream (worker_service.proto).
 * Three things run side by side for the life of a stream:
 *  - reading the worker's messages: credits add up; each ack starts at once (beside the
 *    hand-outs and the other acks) and its answer takes its place in line behind the
 *    answers of the acks sent before it;
 *  - handing out: while credits are left, one engine.dequeue for all of them (up to the
 *    Dequeue limit), long-polling when nothing is due; its jobs go out as one message;
 *  - writing: those messages, in the order they were queued (a StreamOutbox). A hand-out
 *    waits while more than QUEUED_BYTES_MAX of hand-outs wait for the writer, which takes
 *    a message only once the one before is written to the connection: a worker that grants
 *    credits but does not read holds about that much in this server's memory (plus the
 *    message being written), not every job its credits allow.
 * The worker closing its side, the server shutting down or the client going away ends the
 * handing out (a long poll returns at once; jobs being started then are handed back by the
 * engine); the stream ends once every ack received has its answer written. An error ends
 * it too, after the jobs already handed out have been written: none is left unsent. Jobs
 * that could never be written (the client went away, or shutdown cut a stream that was
 * not being read) are handed back at once, not left to their claim timeout; a client going
 * away ends the stream as `canceled`.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import type { DequeuedJob, DequeueStreamRequest, DequeueStreamResponse } from "@runlater/sdk/gen/worker_service_pb.js";
import { invalidArgument } from "../domain/errors.js";
import { limits } from "../domain/limits.js";
import type { Engine } from "../engine/engine.js";
import type { AckInput } from "../engine/inputs.js";
import { dequeuedToProto } from "../wire/dequeued-job.js";
import { ackFromProto, outcomesToProto } from "./convert.js";
import { StreamOutbox } from "./stream-outbox.js";

export function dequeueStream(
  engine: Engine,
  requests: AsyncIterable<DequeueStreamRequest>,
  signal: AbortSignal,
  open: OpenStreams,
): AsyncIterable<DequeueStreamResponse> {
  const stream = new StreamSession(engine, signal);
  open.add(stream.outbox);
  void stream.serve(requests);
  return stream.outbox;
}

/** The streams of a server that have not finished writing, so shutdown can settle them. */
export class OpenStreams {
  private readonly outboxes = new Set<StreamOutbox<DequeueStreamResponse>>();

  add(outbox: StreamOutbox<DequeueStreamResponse>): void {
    this.outboxes.add(outbox);
    void outbox.done.then(() => this.outboxes.delete(outbox));
  }

  /**
   * Once the server's connections are closed nothing more can be written: every stream
   * hands back the jobs it never wrote (a write waiting for 'drain' on a destroyed
   * connection may never fail on its own).
   */
  abandonAll(): void {
    for (const outbox of this.outboxes) outbox.abandon();
  }
}

/** Acks of one stream being applied at once before its next message is read. */
const ACKS_APPLYING_MAX = 16;
/** Messages of one stream waiting to be written before its next message is read. */
const WAITING_TO_BE_WRITTEN_MAX = 64;
/** What a job handed out weighs besides its body (ids, token, times), for the outbox's bound. */
const JOB_OVERHEAD_BYTES = 64;
/**
 * Bytes of hand-outs a stream may have queued behind the message being written before it
 * hands out more. 0 (one hand-out at a time) cost ~10 % of throughput in npm run bench
 * (70.6k against 79.4k jobs/s, medians of three): the next hand-out could no longer be
 * prepared while the writer waited for the connection.
 */
const QUEUED_BYTES_MAX = 4 * 1024 * 1024;

class StreamSession {
  readonly outbox = new StreamOutbox<DequeueStreamResponse>({
    weigh: (message) => message.jobs.reduce((bytes, job) => bytes + job.body.length + JOB_OVERHEAD_BYTES, 0),
    onDropped: (messages) => this.handBack(messages.flatMap((m) => m.jobs)),
  });
  private queue = "";
  /** Jobs the worker can still take: credits granted minus jobs sent. */
  private credits = 0;
  /**
   * The stream is ending (the worker closed its side, an error, shutdown): no more
   * hand-outs, no more messages read (their acks are the worker's to send again); the acks
   * already read still get their answers.
   */
  private readonly ending = new AbortController();
  private handingOut: Promise<void> | undefined;
  private wakeHandOut: (() => void) | undefined;
  /** Acks received and not yet answered. */
  private acksApplying = 0;
  /** The answer of the last ack received, written once the answers before it are. */
  private lastAnswer: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: Engine,
    private readonly signal: AbortSignal,
  ) {}

  async serve(requests: AsyncIterable<DequeueStreamRequest>): Promise<void> {
    // Shutdown (or the client going away) ends the stream without waiting for the worker
    // to close its side: stop reading, answer what was read, end.
    const aborted = new Promise<void>((resolve) => {
      if (this.signal.aborted) resolve();
      this.signal.addEventListener("abort", () => resolve(), { once: true });
    });
    await Promise.race([this.read(requests), aborted]);
    this.ending.abort();
    await this.handingOut;
    await this.lastAnswer;
    this.outbox.close();
  }

  private async read(requests: AsyncIterable<DequeueStreamRequest>): Promise<void> {
    try {
      for await (const req of requests) {
        if (this.ending.signal.aborted) return;
        if (this.handingOut === undefined) {
          await this.open(req);
          this.handingOut = this.handOut();
        }
        this.take(req);
        // Read no further while the worker is not reading our answers, or its acks pile
        // up unapplied: its messages then wait in HTTP/2 flow control, not in our memory.
        if (this.acksApplying > ACKS_APPLYING_MAX) await this.lastAnswer;
        await this.outbox.waitBelow(WAITING_TO_BE_WRITTEN_MAX);
      }
    } catch (err) {
      // The client going away shows here as a broken request stream: that is no server fault.
      this.fail(this.signal.aborted ? new ConnectError("the client went away", Code.Canceled) : err);
    }
  }

  /** The first message names the queue, which must exist. */
  private async open(first: DequeueStreamRequest): Promise<void> {
    if (first.queue === "")
      throw invalidArgument("queue", "queue is empty: the first message of a DequeueStream names the queue");
    await this.engine.requireQueue(first.queue);
    this.queue = first.queue;
  }

  private take(req: DequeueStreamRequest): void {
    if (req.queue !== "" && req.queue !== this.queue) {
      throw invalidArgument(
        "queue",
        `a DequeueStream serves one queue (${this.queue}), this message names ${req.queue}`,
      );
    }
    if (req.credit > 0) {
      const credits = this.credits + req.credit;
      if (credits > limits.streamCreditMax) {
        throw invalidArgument(
          "credit",
          `credits not yet used may not exceed ${limits.streamCreditMax}; this message brings them to ${credits}`,
        );
      }
      this.credits = credits;
      this.wakeHandOut?.();
    }
    if (req.ack) this.answer(ackFromProto(req.ack));
  }

  /** Applies an ack now; its answer is written after those of the acks before it. */
  private answer(ack: AckInput): void {
    const applied = this.engine.ack({ ...ack, queue: ack.queue || this.queue });
    applied.catch(() => {}); // awaited below, maybe only after earlier answers: not unhandled meanwhile
    this.acksApplying++;
    this.lastAnswer = this.lastAnswer.then(async () => {
      try {
        const results = outcomesToProto(await applied);
        this.outbox.push({
          $typeName: "runlater.v1.DequeueStreamResponse",
          jobs: [],
          ack: { $typeName: "runlater.v1.AckResponse", results },
        });
      } catch (err) {
        this.fail(err);
      } finally {
        this.acksApplying--;
      }
    });
  }

  private async handOut(): Promise<void> {
    const stopped = this.ending.signal;
    try {
      while (!stopped.aborted) {
        if (this.credits === 0) {
          await this.creditOrStop(stopped);
          continue;
        }
        // The writer takes the next message only once the previous one is on the connection,
        // so this is where a worker that does not read holds the server back.
        await untilOrStop(this.outbox.waitWeightBelow(QUEUED_BYTES_MAX), stopped);
        if (stopped.aborted) break;
        const { jobs } = await this.engine.dequeue({
          queue: this.queue,
          limit: Math.min(this.credits, limits.dequeueLimitMax),
          waitMs: limits.dequeueWaitMaxMs,
          signal: stopped,
          dryRun: false,
        });
        if (jobs.length === 0) continue;
        this.credits -= jobs.length;
        const sent = this.outbox.push({
          $typeName: "runlater.v1.DequeueStreamResponse",
          jobs: jobs.map((j) => dequeuedToProto(j, false)),
        });
        // The stream failed while they were being started: hand them back now rather than
        // leave them to their claim timeout.
        if (!sent) await this.engine.releaseUndelivered(jobs);
      }
    } catch (err) {
      this.fail(err);
    }
  }

  private creditOrStop(stopped: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        this.wakeHandOut = undefined;
        stopped.removeEventListener("abort", done);
        resolve();
      };
      this.wakeHandOut = done;
      stopped.addEventListener("abort", done, { once: true });
    });
  }

  /** Jobs pushed but never written to the client: back to pending at once, charging nothing. */
  private handBack(jobs: DequeuedJob[]): void {
    if (jobs.length === 0) return;
    // A failed hand-back leaves them to their claim timeout, as any lost worker's jobs.
    this.engine.releaseUndelivered(jobs.map((j) => ({ id: j.jobId, claimToken: j.claimToken }))).catch(() => {});
  }

  private fail(err: unknown): void {
    this.ending.abort();
    this.outbox.fail(err);
  }
}

/** Resolves when `work` does or `signal` aborts, whichever is first. */
function untilOrStop(work: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    void work.then(done);
  });
}
