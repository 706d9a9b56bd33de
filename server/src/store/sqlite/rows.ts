/**
 * jobs rows ↔ JobRecord, and the columns a transition's patch may set: fixed here, so the
 * only SQL made at run time is a list of these names.
 */
import type { JobRecord, StoredState } from "../../domain/job-record.js";

/** Every column but the body. */
export const META_COLUMNS =
  "seq, id, queue, part, state, priority, run_after, attempts_allowed, attempts_remaining, attempt, custom_status, " +
  "created_at, updated_at, finished_at, claim_token, claim_expires_at, retry_delay_ms, idempotency_key, ordering_key, workflow, traceparent";
export const JOB_COLUMNS = `${META_COLUMNS}, body`;
/** The record without its body, saying how long it is (length() of a blob reads no content). */
export const META_AND_SIZE = `${META_COLUMNS}, length(body) AS body_size`;

export interface JobRow {
  seq: number;
  id: string;
  queue: string;
  part: number;
  state: StoredState;
  priority: number;
  run_after: number;
  attempts_allowed: number;
  attempts_remaining: number;
  attempt: number;
  custom_status: string;
  created_at: number;
  updated_at: number;
  finished_at: number;
  claim_token: string;
  claim_expires_at: number;
  retry_delay_ms: number;
  idempotency_key: string | null;
  ordering_key: string | null;
  workflow: string | null;
  traceparent: string | null;
  body?: Uint8Array;
  body_size?: number;
}

export function toRecord(row: JobRow): JobRecord {
  const job: JobRecord = {
    id: row.id,
    queue: row.queue,
    partition: row.part,
    state: row.state,
    priority: row.priority,
    body: row.body ?? new Uint8Array(),
    runAfter: row.run_after,
    attemptsAllowed: row.attempts_allowed,
    attemptsRemaining: row.attempts_remaining,
    attempt: row.attempt,
    customStatus: row.custom_status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    claimToken: row.claim_token,
    claimExpiresAt: row.claim_expires_at,
    retryDelayMs: row.retry_delay_ms,
    bufferEpoch: 0, // buffered jobs are held in memory, pending in their rows (held-jobs.ts)
    idempotencyKey: row.idempotency_key ?? "",
    orderingKey: row.ordering_key ?? "",
    seq: row.seq,
  };
  if (row.body_size !== undefined) job.bodySize = row.body_size;
  if (row.workflow !== null) job.workflow = row.workflow;
  if (row.traceparent !== null) job.traceparent = row.traceparent;
  return job;
}

/** The column of each field a transition may change. */
const PATCH_COLUMNS: Partial<Record<keyof JobRecord, string>> = {
  state: "state",
  body: "body",
  runAfter: "run_after",
  attemptsAllowed: "attempts_allowed",
  attemptsRemaining: "attempts_remaining",
  attempt: "attempt",
  customStatus: "custom_status",
  updatedAt: "updated_at",
  finishedAt: "finished_at",
  claimToken: "claim_token",
  claimExpiresAt: "claim_expires_at",
  retryDelayMs: "retry_delay_ms",
};

/** The column a transition's field is written to. */
export function patchColumn(field: string): string {
  const column = PATCH_COLUMNS[field as keyof JobRecord];
  if (!column) throw new Error(`a transition set ${field}, which the SQLite store does not write`);
  return column;
}
