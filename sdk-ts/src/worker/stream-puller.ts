/**
 * Takes jobs over WorkerService.DequeueStream: one long-lived stream instead of a
 * Dequeue call per batch. The worker grants credits as its slots free up and sends its
 * outcomes on the same stream; the server pushes jobs as they become due, never more
 * than the credits not yet used.
 *
 * - Credits: at most the worker's free slots minus the jobs already on their way
 *   (`onTheWay`), granted once half a batch of room is free (fewer, fuller messages).
 * - Acks: sent with the next message, or on their own when the AckBatcher's flush delay
 *   runs out; the server answers them in order, so the unanswered ones are a FIFO. When a
 *   stream ends or breaks, those go back to the AckBatcher (a repeat is harmless: it comes
 *   back STALE_CLAIM) and travel on the next stream or an Ack call.
 * - Stop: the worker closes its side; the server answers the acks it has, hands back jobs
 *   it was starting, and ends the stream. Jobs that arrive meanwhile are delivered (the
 *   worker releases them). A server that does not end the stream in time is cut off.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import { AsyncQueue } from "../async-queue.js";
import type {
  AckRequest,
  AckResponse,
  DequeuedJob,
  DequeueStreamRequestSchema,
  WorkerService,
} from "../gen/runlater/v1/worker_service_pb.js";
import type { AckBatcher } from "./ack-batcher.js";
import { Backoff, sleep } from "./backoff.js";
import { type RawDequeueWorkerService, readJobs } from "./dequeued-codec.js";
import type { WorkerErrorHandler } from "./types.js";

export interface StreamPullerOptions {
  queue: string;
  workerId: string;
  worker: Client<typeof WorkerService>;
  /**
   * The same service over the same transport, its stream's jobs left as bytes and read by
   * hand (dequeued-codec.ts); only over a binary transport. Without it, `worker`'s stream.
   */
  rawWorker?: Client<typeof RawDequeueWorkerService>;
  acks: AckBatcher;
  /** Slots holding no job (neither running nor waiting to start). */
  freeSlots(): number;
  /** Grant credits once at least this many are free. */
  refillAt: number;
  /** Jobs pushed by the server. */
  received(jobs: DequeuedJob[]): void;
  /** How long the server may take to end the stream after stop. */
  stopTimeoutMs: number;
  onError: WorkerErrorHandler;
}

type Request = MessageInitShape<typeof DequeueStreamRequestSchema>;

export class StreamPuller {
  /** Credits granted on the open stream and not yet used: jobs that may be on their way. */
  private onTheWay = 0;
  private requests: AsyncQueue<Request> | undefined;
  /** Acks sent on the open stream and not yet answered, oldest first. */
  private unanswered: AckRequest[] = [];
  private pokeScheduled = false;

  constructor(private readonly o: StreamPullerOptions) {}

  /** Keeps a stream open (opening another after an end or an error) until `stop` aborts. */
  async run(stop: AbortSignal): Promise<void> {
    const backoff = new Backoff();
    while (!stop.aborted) {
      const { brought, error } = await this.stream(stop);
      if (stop.aborted) return;
      if (brought) backoff.reset();
      if (error !== undefined) this.o.onError(error, { op: "dequeue" });
      // A stream that broke, or ended having brought nothing, is not reopened at once.
      if (error !== undefined || !brought) await sleep(backoff.next(), stop);
    }
  }

  /** Something changed (a job finished): send credits and acks if worth it, once per tick. */
  poke(): void {
    if (this.pokeScheduled || !this.requests) return;
    this.pokeScheduled = true;
    // Let handlers finishing in the same tick report too, so one message carries them all.
    setImmediate(() => {
      this.pokeScheduled = false;
      this.send(false);
    });
  }

  /** The AckBatcher's flush delay ran out: send its acks now. False if no stream is open to carry them. */
  carryAcks(): boolean {
    if (!this.requests) return false;
    this.send(true);
    return true;
  }

  /** One stream from open to end: whether it brought any message, and the error it ended with. */
  private async stream(stop: AbortSignal): Promise<{ brought: boolean; error?: unknown }> {
    const requests = new AsyncQueue<Request>();
    const cutOff = new AbortController();
    const onStop = () => {
      // From now on outcomes go by Ack calls; the acks already sent still get their answers.
      this.requests = undefined;
      requests.close();
      setTimeout(
        () => cutOff.abort(new Error("the server did not end the stream in time after stop")),
        this.o.stopTimeoutMs,
      ).unref();
    };
    stop.addEventListener("abort", onStop, { once: true });
    let brought = false;
    try {
      // timeoutMs 0: the stream lives as long as the worker; a deadline the client sets for
      // its calls would cut it (and put the jobs in flight back) every timeoutMs.
      const options = { signal: cutOff.signal, timeoutMs: 0 };
      const responses = this.o.rawWorker
        ? this.readRaw(this.o.rawWorker.dequeueStream(requests, options))
        : this.o.worker.dequeueStream(requests, options);
      this.requests = requests;
      this.onTheWay = this.freeCredit();
      requests.push({ queue: this.o.queue, workerId: this.o.workerId, credit: this.onTheWay });
      for await (const res of responses) {
        brought = true;
        if (res.jobs.length > 0) {
          this.onTheWay -= res.jobs.length;
          this.o.received(res.jobs);
        }
        if (res.ack) {
          const sent = this.unanswered.shift();
          if (sent) this.o.acks.checkResults(sent, res.ack);
        }
      }
      return { brought };
    } catch (error) {
      return { brought, error };
    } finally {
      stop.removeEventListener("abort", onStop);
      requests.close();
      this.requests = undefined;
      this.onTheWay = 0;
      // Unanswered acks may or may not have been applied: send them again.
      for (const ack of this.unanswered.splice(0)) this.o.acks.restore(ack);
    }
  }

  /** The raw stream's answers with their jobs read. */
  private async *readRaw(
    raw: AsyncIterable<{ jobs: Uint8Array[]; ack?: AckResponse }>,
  ): AsyncIterable<{ jobs: DequeuedJob[]; ack?: AckResponse }> {
    for await (const res of raw) yield { jobs: readJobs(res), ack: res.ack };
  }

  private send(ackDue: boolean): void {
    const requests = this.requests;
    if (!requests) return;
    const credit = this.freeCredit();
    if (credit < this.o.refillAt && !ackDue && this.o.acks.size < this.o.refillAt) return;
    const ack = this.o.acks.take();
    if (ack === undefined && credit === 0) return;
    this.onTheWay += credit;
    if (ack) this.unanswered.push(ack);
    requests.push({ credit, ack });
  }

  /** Free slots not already spoken for by credits granted. */
  private freeCredit(): number {
    return Math.max(0, this.o.freeSlots() - this.onTheWay);
  }
}
