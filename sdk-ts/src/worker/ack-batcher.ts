/**
 * Collects job outcomes and gets them to the server in batches. The cheap path is the
 * next Dequeue (take() hands the batch over to piggy-back on it) or the DequeueStream;
 * when no Dequeue is coming soon, because the worker is saturated or long-polling, a
 * short timer sends them with an Ack call instead (or on the stream: `carrier`). A batch whose call failed is put back (restore), so no
 * outcome is lost to a network error: repeating an already-applied ack is harmless, it
 * just comes back STALE_CLAIM.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import {
  type AckRequest,
  AckRequestSchema,
  type AckResponse,
  type JobFailure,
  JobFailureSchema,
  type JobSuccess,
  type JobSuccessSchema,
  Outcome,
  type WorkerService,
} from "../gen/runlater/v1/worker_service_pb.js";
import { deliver } from "./deliver.js";
import { timerDelay } from "./timer-delay.js";

import type { WorkerErrorHandler } from "./types.js";

/** Shared by every success without a result (none is changed once made). */
const NO_RESULT = new Uint8Array();

export interface AckBatcherOptions {
  queue: string;
  worker: Client<typeof WorkerService>;
  /** How long an outcome may wait for a Dequeue to carry it before an Ack call is made. */
  flushDelayMs: number;
  onError: WorkerErrorHandler;
}

export class AckBatcher {
  private succeeded: JobSuccess[] = [];
  private failed: JobFailure[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private closed = false;
  /** Epoch ms after which failed Ack calls are no longer retried (set at shutdown). */
  giveUpAt = Number.POSITIVE_INFINITY;
  /**
   * When the flush delay runs out, first offered the pending outcomes: it takes them and
   * sends them some other way (a DequeueStream) and returns true, or returns false and an
   * Ack call sends them.
   */
  carrier: (() => boolean) | undefined;

  constructor(private readonly o: AckBatcherOptions) {}

  get size(): number {
    return this.succeeded.length + this.failed.length;
  }

  succeed(s: MessageInitShape<typeof JobSuccessSchema>): void {
    // A literal rather than create(), which walks the schema: this runs once per job. (A
    // field added to JobSuccess makes this a compile error until it is set here.)
    const success: JobSuccess = {
      $typeName: "runlater.v1.JobSuccess",
      jobId: s.jobId ?? "",
      claimToken: s.claimToken ?? "",
      customStatus: s.customStatus ?? "",
      result: s.result ?? NO_RESULT,
      noEvents: s.noEvents ?? false,
    };
    this.succeeded.push(success);
    this.schedule();
  }

  fail(f: MessageInitShape<typeof JobFailureSchema>): void {
    this.failed.push(create(JobFailureSchema, f));
    this.schedule();
  }

  /** Hands over everything pending (to piggy-back on a Dequeue), or undefined if nothing is. */
  take(): AckRequest | undefined {
    if (this.size === 0) return undefined;
    this.clearTimer();
    // queue left empty: a piggy-backed ack uses the Dequeue's queue; send() fills it in.
    const req = create(AckRequestSchema, { succeeded: this.succeeded, failed: this.failed });
    this.succeeded = [];
    this.failed = [];
    return req;
  }

  /** Puts back a batch whose call failed, to go out with the next Dequeue or Ack. */
  restore(req: AckRequest): void {
    this.succeeded.unshift(...req.succeeded);
    this.failed.unshift(...req.failed);
    this.schedule();
  }

  /** Reports the jobs the server refused (stale claim, unknown id): their outcome was not applied. */
  checkResults(req: AckRequest, res: AckResponse | undefined): void {
    for (const r of res?.results ?? []) {
      if (r.outcome === Outcome.ACKNOWLEDGED) continue;
      this.o.onError(new Error(`ack of job ${r.jobId} refused: ${Outcome[r.outcome]}`), { op: "ack", jobId: r.jobId });
    }
    if (res && res.results.length !== req.succeeded.length + req.failed.length) {
      this.o.onError(
        new Error(`ack answered ${res.results.length} outcomes for ${req.succeeded.length + req.failed.length} jobs`),
        { op: "ack" },
      );
    }
  }

  /** Sends everything pending with Ack calls now; resolves when nothing is left to send. */
  flush(): Promise<void> {
    this.clearTimer();
    this.flushing ??= this.drain().finally(() => {
      this.flushing = undefined;
      this.schedule(); // outcomes that arrived during the last call
    });
    return this.flushing;
  }

  /** Stops the timer; pending outcomes stay until flush(). */
  close(): void {
    this.closed = true;
    this.clearTimer();
  }

  private async drain(): Promise<void> {
    for (let req = this.take(); req; req = this.take()) {
      const batch = req;
      const res = await deliver(() => this.o.worker.ack({ ...batch, queue: this.o.queue }), {
        onError: this.o.onError,
        context: { op: "ack" },
        giveUpAt: () => this.giveUpAt,
      });
      if (res) this.checkResults(batch, res);
      else
        this.o.onError(
          new Error(
            `${batch.succeeded.length + batch.failed.length} job outcomes could not be delivered; the claims will time out and the jobs run again`,
          ),
          { op: "ack" },
        );
    }
  }

  private schedule(): void {
    if (this.closed || this.size === 0 || this.timer || this.flushing) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.carrier?.()) void this.flush();
    }, timerDelay(this.o.flushDelayMs));
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
