/**
 * A job as stores keep it. Times are epoch milliseconds (0 = none).
 *
 * Inside a store a job is pending, waiting (behind an earlier job of its ordering key:
 * not claimable; shown to users as PENDING), buffered (claimed into a broker's memory
 * under a partition lease epoch, not yet handed out; shown as PENDING), running,
 * succeeded or failed. Only domain/transitions.ts decides how a job moves between them.
 */
export type StoredState = "pending" | "waiting" | "buffered" | "running" | "succeeded" | "failed";

export interface JobRecord {
  id: string;
  queue: string;
  partition: number;
  state: StoredState;
  priority: number;
  body: Uint8Array;
  runAfter: number;
  attemptsAllowed: number;
  /** Attempts not yet started: charged when a job is handed to a worker. */
  attemptsRemaining: number;
  /** Number of the current (or last) attempt, from 1; 0 before the first. */
  attempt: number;
  customStatus: string;
  createdAt: number;
  updatedAt: number;
  finishedAt: number;
  claimToken: string;
  claimExpiresAt: number;
  /** Delay before the next attempt if this one fails without saying (set at hand-out). */
  retryDelayMs: number;
  /** Lease epoch under which the job was buffered. */
  bufferEpoch: number;
  idempotencyKey: string;
  /**
   * Jobs of a partition sharing a non-empty ordering key run one at a time, in enqueue
   * order ("" = none). FIFO queues give every job FIFO_ORDERING_KEY (domain/ordering.ts).
   */
  orderingKey: string;
  /** Enqueue order within the store: the tie-break after priority and run_after. */
  seq: number;
  /**
   * Set for a run of a workflow job: its context (workflow-codec.ts encodeJobContext),
   * which stores keep verbatim. Its ACK and final failure go through the workflow step
   * (Store.instanceApply), never the plain one.
   */
  workflow?: string;
  /**
   * The W3C traceparent the job was enqueued with (domain/trace-context.ts), which
   * workers continue the trace of; undefined: none. Stores keep it verbatim.
   */
  traceparent?: string;
  /**
   * The body's length in bytes, set on records read without their body (`bodies: false`,
   * where `body` is empty): what an answer that wants the bodies will have to carry.
   */
  bodySize?: number;
}

/** The record without its body, saying how big the body is (see JobRecord.bodySize). */
export function withoutBody(job: JobRecord): JobRecord {
  return { ...job, body: new Uint8Array(), bodySize: job.body.length };
}

/** What a store needs to insert a job; the engine has already decided every field. */
export type NewJob = Pick<
  JobRecord,
  | "id"
  | "queue"
  | "partition"
  | "priority"
  | "body"
  | "runAfter"
  | "attemptsAllowed"
  | "customStatus"
  | "createdAt"
  | "idempotencyKey"
  | "orderingKey"
  | "workflow"
  | "traceparent"
>;

/** Per-job result of an ack or checkpoint (proto Outcome). */
export type Outcome = "acknowledged" | "stale_claim" | "not_found";

/**
 * What a store answers for one item of an ACK: an Outcome, or "workflow": the claim holds,
 * but the job is a run of a workflow job, so nothing was changed; its ACK must go through
 * the workflow step (Store.instanceApply) with the instance's transition.
 */
export type AckOutcome = Outcome | "workflow";

/** ScanJobs order: newest run_after first, ties by id descending (the page cursor's order). */
export function compareForScan(a: JobRecord, b: JobRecord): number {
  return b.runAfter - a.runAfter || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** Dequeue order: priority, then run_after, then enqueue order. */
export function compareForDequeue(a: JobRecord, b: JobRecord): number {
  return a.priority - b.priority || a.runAfter - b.runAfter || a.seq - b.seq;
}
