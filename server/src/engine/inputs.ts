/** What the API layer hands the engine: requests as domain values, and the answers it gets back. */
import type { JobFilter } from "../domain/job-filter.js";
import type { Outcome } from "../domain/job-record.js";
import type { QueueRecord, QueueStatsRecord } from "../store/store.js";

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
  /** W3C traceparent of the enqueuing span; "" or absent: none. */
  traceparent?: string;
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
  succeeded: Array<{
    jobId: string;
    claimToken: string;
    customStatus: string;
    /** A workflow job's result payload (docs/workflows.md); ignored for other jobs. */
    result?: Uint8Array;
    /** A workflow job's run that posts no events downstream. */
    noEvents?: boolean;
  }>;
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
