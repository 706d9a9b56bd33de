/** The job as a handler sees it: a DequeuedJob with decoded fields and its abort signal. */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { decodeJson, decodeText } from "../body.js";
import type { Snooze, Success, SuccessOptions } from "../control.js";
import type { DequeuedJob } from "../gen/runlater/v1/worker_service_pb.js";
import type { WorkflowContext } from "../gen/runlater/v1/workflow_service_pb.js";

export interface WorkerJob {
  /** The job's id. */
  readonly id: string;
  /** The payload, byte for byte as enqueued. */
  readonly body: Uint8Array;
  /** The payload read as UTF-8 (throws on bytes that are not UTF-8). */
  text(): string;
  /** The payload parsed as JSON. The type parameter is an unchecked assertion. */
  json<T = unknown>(): T;
  /** This attempt's number, from 1. */
  readonly attempt: number;
  /** Attempts allowed in all; attempt === attemptsAllowed means this is the last one. */
  readonly attemptsAllowed: number;
  /** 1 is the highest priority. */
  readonly priority: number;
  /** When the job was enqueued. */
  readonly createdAt: Date;
  /** The job's custom status so far. */
  readonly customStatus: string;
  /** Set when the job is a run of a workflow job: which run, and the events that triggered it. */
  readonly workflow: WorkflowContext | undefined;
  /**
   * Aborts when the worker stops caring about the result: the shutdown grace period ran
   * out, or the claim was lost (the job may already be running elsewhere). Pass it to
   * fetch() and friends so abandoned work stops early.
   */
  readonly signal: AbortSignal;
}

/**
 * What a handler may return: nothing (success), a custom status (success), snooze(ms), or
 * success({ customStatus, result, noEvents }) (or that plain object): a workflow job's output.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: `void` lets a handler that returns nothing (Promise<void>) be a JobHandler.
export type HandlerResult = void | string | Snooze | Success | SuccessOptions;

export type JobHandler = (job: WorkerJob) => Promise<HandlerResult>;

/** One object per job with methods on the prototype: no per-job closures on the hot path. */
class DequeuedWorkerJob implements WorkerJob {
  constructor(
    private readonly job: DequeuedJob,
    readonly signal: AbortSignal,
  ) {}

  get id(): string {
    return this.job.jobId;
  }

  get body(): Uint8Array {
    return this.job.body;
  }

  get attempt(): number {
    return this.job.attempt;
  }

  get attemptsAllowed(): number {
    return this.job.attemptsAllowed;
  }

  get priority(): number {
    return this.job.priority;
  }

  get createdAt(): Date {
    return this.job.createdAt ? timestampDate(this.job.createdAt) : new Date(0);
  }

  get customStatus(): string {
    return this.job.customStatus;
  }

  get workflow(): WorkflowContext | undefined {
    return this.job.workflow;
  }

  text(): string {
    return decodeText(this.job.body);
  }

  json<T = unknown>(): T {
    return decodeJson<T>(this.job.body);
  }
}

export function toWorkerJob(job: DequeuedJob, signal: AbortSignal): WorkerJob {
  return new DequeuedWorkerJob(job, signal);
}
