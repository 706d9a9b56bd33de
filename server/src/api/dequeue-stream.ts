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
 * A worker that comes straight back for more gets its next jobs started before it asks
 * (prepareAhead, --hand-out-ahead), so that they go out the moment its credits come.
 * The worker closing its side, the server shutting down or the client going away ends the
 * handing out (a long poll returns at once; jobs being started then are handed back by the
 * engine); the stream ends once every ack received has its answer written. An error ends
 * it too, after the jobs already handed out have been written: none is left unsent. Jobs
 * that could never be written (the client went away, or shutdown cut a stream that was
 * not being read) are handed back at once, not left to their claim timeout; a client going
 * away ends the stream as `canceled`.
 */
import { WireType } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import type { DequeueStreamRequest, DequeueStreamResponse } from "@runlater/sdk/gen/worker_service_pb.js";
import { invalidArgument } from "../domain/errors.js";
import type { JobRecord } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import type { Engine } from "../engine/engine.js";
import type { AckInput } from "../engine/inputs.js";
import { dequeuedToProto, encodeDequeuedJobs } from "../wire/dequeued-job.js";
import { ackFromProto, outcomesToProto } from "./convert.js";
import { StreamOutbox } from "./stream-outbox.js";

/**
 * `binary`: the stream's messages are binary protobuf (Connect's or gRPC's), not JSON: its
 * hand-outs then carry their jobs encoded by hand (handOutMessage).
 */
export function dequeueStream(
  engine: Engine,
  requests: AsyncIterable<DequeueStreamRequest>,
  signal: AbortSignal,
  open: OpenStreams,
  binary: boolean,
): AsyncIterable<DequeueStreamResponse> {
  const stream = new StreamSession(engine, signal, open.aheadHoldMs, binary);
  open.add(stream.outbox);
  void stream.serve(requests);
  return stream.outbox;
}

/** The streams of a server that have not finished writing, so shutdown can settle them, and what they share. */
export class OpenStreams {
  private readonly outboxes = new Set<StreamOutbox<DequeueStreamResponse>>();

  /**
   * `aheadHoldMs`: how long the next batch of a worker that comes straight back for more
   * may be held for it, started ahead of its credits (StreamSession.prepareAhead); 0
   * hands out nothing ahead.
   */
  constructor(readonly aheadHoldMs = AHEAD_HOLD_MS_DEFAULT) {}

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
/**
 * Handing out ahead (StreamSession.prepareAhead, --hand-out-ahead): a stream whose worker
 * gave its credits back within this long after using them up gets its next batches started
 * before the credits come, and they wait for them at most this long before they go back to
 * the queue. 50 ms rather than 20: a collection pause of 20–30 ms in a worker or the server
 * made 2–5 % of the jobs of 2 workers × 200 on Redis go back unsent at 20 ms (a start and a
 * hand-back spent for nothing), none at 50.
 */
export const AHEAD_HOLD_MS_DEFAULT = 50;
/** The most --hand-out-ahead may be: longer would keep jobs from other workers for longer than a worker's turn takes. */
export const AHEAD_HOLD_MS_MAX = 1000;
/**
 * Hand-outs' worth started ahead: two, so that one store call starts the jobs of two
 * turns of the worker (Redis 1 worker × 100, alternating: +7–23 % over one).
 */
const AHEAD_HAND_OUTS = 2;

class StreamSession {
  readonly outbox = new StreamOutbox<DequeueStreamResponse>({
    weigh: (message) => this.jobsOf(message).reduce((bytes, job) => bytes + job.body.length + JOB_OVERHEAD_BYTES, 0),
    onDropped: (messages) => this.handBack(messages.flatMap((m) => this.jobsOf(m))),
  });
  /** The jobs of each hand-out this stream queued, by message (a binary one carries them encoded). */
  private readonly handedOut = new WeakMap<DequeueStreamResponse, JobRecord[]>();
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
  /** Jobs started ahead of the worker's credits (prepareAhead), and the timer that hands them back. */
  private ahead: { jobs: JobRecord[]; expire: NodeJS.Timeout } | undefined;
  /** When the last hand-out used up the credits (undefined once credits came back), and the credits it used. */
  private usedUpAt: number | undefined;
  private usedUp = 0;
  /** How long the worker took to give credits back after its last hand-out used them all up. */
  private turnaroundMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly engine: Engine,
    private readonly signal: AbortSignal,
    private readonly aheadHoldMs: number,
    private readonly binary: boolean,
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
      if (this.usedUpAt !== undefined) {
        this.turnaroundMs = performance.now() - this.usedUpAt;
        this.usedUpAt = undefined;
      }
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
          if (this.ahead === undefined && this.aheadHoldMs > 0 && this.turnaroundMs <= this.aheadHoldMs)
            await this.prepareAhead(stopped);
          if (this.credits === 0) await this.creditOrStop(stopped);
          continue;
        }
        // The writer takes the next message only once the previous one is on the connection,
        // so this is where a worker that does not read holds the server back.
        await untilOrStop(this.outbox.waitWeightBelow(QUEUED_BYTES_MAX), stopped);
        if (stopped.aborted) break;
        const jobs =
          this.takeAhead() ??
          (
            await this.engine.dequeue({
              queue: this.queue,
              limit: Math.min(this.credits, limits.dequeueLimitMax),
              waitMs: limits.dequeueWaitMaxMs,
              signal: stopped,
              dryRun: false,
            })
          ).jobs;
        if (jobs.length === 0) continue;
        this.credits -= jobs.length;
        if (this.credits === 0) {
          this.usedUpAt = performance.now();
          this.usedUp = jobs.length;
        }
        const sent = this.outbox.push(this.handOutMessage(jobs));
        // The stream failed while they were being started: hand them back now rather than
        // leave them to their claim timeout.
        if (!sent) await this.engine.releaseUndelivered(jobs);
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.handBackAhead();
    }
  }

  /**
   * A worker that runs short jobs gives its credits back a moment after it gets its jobs,
   * and between the two the jobs it will ask for next are not being started: one batch at
   * a time goes round worker, server and store in turn, each idle while the others work.
   * For a worker that gave its credits back within aheadHoldMs (--hand-out-ahead), the
   * jobs of its next AHEAD_HAND_OUTS hand-outs (as many as the last hand-out that used up
   * its credits, each) are started now, without waiting (nothing is long-polled for), and
   * go out the moment credits come. Jobs the credits have not taken aheadHoldMs after they
   * were started, or after the credits last took some, go back to the queue, and nothing
   * more is started ahead until the worker comes back in time again. The worker still never
   * gets more jobs than it granted credits for; a job may be started up to about
   * aheadHoldMs × AHEAD_HAND_OUTS before the worker asked for it (its claim time runs from then).
   */
  private async prepareAhead(stopped: AbortSignal): Promise<void> {
    // First let the hand-out just pushed be written (on the memory store the dequeue below
    // would otherwise run before it leaves), and give credits already on their way a chance.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.credits > 0 || stopped.aborted) return;
    const { jobs } = await this.engine.dequeue({
      queue: this.queue,
      limit: Math.min(this.usedUp * AHEAD_HAND_OUTS, limits.dequeueLimitMax),
      waitMs: 0,
      signal: stopped,
      dryRun: false,
    });
    // (A stream that ended meanwhile got none: the engine handed them back.)
    if (jobs.length === 0) return;
    const expire = setTimeout(() => this.handBackAhead(), this.aheadHoldMs);
    expire.unref();
    this.ahead = { jobs, expire };
  }

  /** Up to the credits' worth of the jobs started ahead, or undefined when there are none. */
  private takeAhead(): JobRecord[] | undefined {
    const ahead = this.ahead;
    if (ahead === undefined) return undefined;
    if (ahead.jobs.length > this.credits) {
      ahead.expire.refresh(); // the rest waits for the worker's next turn
      return ahead.jobs.splice(0, this.credits);
    }
    clearTimeout(ahead.expire);
    this.ahead = undefined;
    return ahead.jobs;
  }

  /** Jobs started ahead and not handed out: back to the queue at once. */
  private handBackAhead(): void {
    const ahead = this.ahead;
    if (ahead === undefined) return;
    clearTimeout(ahead.expire);
    this.ahead = undefined;
    // The worker did not come back in time: it is busy, so no more ahead until it does.
    this.turnaroundMs = Number.POSITIVE_INFINITY;
    this.handBack(ahead.jobs);
  }

  private creditOrStop(stopped: AbortSignal): Promise<void> {
    // Stopped while the jobs ahead were being started: no abort event is coming any more.
    if (stopped.aborted) return Promise.resolve();
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

  /**
   * A hand-out of `jobs`. Over binary protobuf its jobs are encoded here, by hand
   * (encodeDequeuedJobs: protobuf-es's reflective writer was an eighth of the server's busy
   * time), and ride as one unknown field 1 entry: with its tag, the bytes of its `jobs`
   * exactly, which the router writes as they are (server.ts: writeUnknownFields). Over JSON,
   * as messages.
   */
  private handOutMessage(jobs: JobRecord[]): DequeueStreamResponse {
    const message: DequeueStreamResponse = this.binary
      ? {
          $typeName: "runlater.v1.DequeueStreamResponse",
          jobs: [],
          $unknown:
            jobs.length > 0 ? [{ no: 1, wireType: WireType.LengthDelimited, data: encodeDequeuedJobs(jobs) }] : [],
        }
      : { $typeName: "runlater.v1.DequeueStreamResponse", jobs: jobs.map((j) => dequeuedToProto(j, false)) };
    this.handedOut.set(message, jobs);
    return message;
  }

  private jobsOf(message: DequeueStreamResponse): Array<Pick<JobRecord, "id" | "claimToken" | "body">> {
    return this.handedOut.get(message) ?? [];
  }

  /** Jobs started for this stream and never written to the client: back to pending at once, charging nothing. */
  private handBack(jobs: Array<Pick<JobRecord, "id" | "claimToken">>): void {
    if (jobs.length === 0) return;
    // A failed hand-back leaves them to their claim timeout, as any lost worker's jobs.
    this.engine.releaseUndelivered(jobs).catch(() => {});
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
