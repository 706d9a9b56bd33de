/**
 * jobs rows ↔ JobRecord, and a transition's patch written to a row: the column names a
 * patch may set are fixed here, so the only SQL made at run time is a list of those.
 */
import type { JobRecord, StoredState } from "../../domain/job-record.js";
import type { JobPatch } from "../../domain/transitions.js";
import type { SqliteContext } from "./context.js";

/** Every column but the body. */
export const META_COLUMNS =
  "seq, id, queue, part, state, priority, run_after, attempts_allowed, attempts_remaining, attempt, custom_status, " +
  "created_at, updated_at, finished_at, claim_token, claim_expires_at, retry_delay_ms, buffer_epoch, idempotency_key, ordering_key";
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
  buffer_epoch: number;
  idempotency_key: string | null;
  ordering_key: string | null;
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
    bufferEpoch: row.buffer_epoch,
    idempotencyKey: row.idempotency_key ?? "",
    orderingKey: row.ordering_key ?? "",
    seq: row.seq,
  };
  if (row.body_size !== undefined) job.bodySize = row.body_size;
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
  bufferEpoch: "buffer_epoch",
};

/**
 * Writes `patch` to the row `seq`; with `leaveKey`, the job also leaves its ordering key's
 * sequence (key_pos = NULL) in the same statement. One prepared statement per set of fields.
 */
export function writePatch(ctx: SqliteContext, seq: number, patch: JobPatch, leaveKey = false): void {
  const fields = Object.keys(patch) as Array<keyof JobRecord>;
  const sets = fields.map((f) => {
    const column = PATCH_COLUMNS[f];
    if (!column) throw new Error(`a transition set ${f}, which the SQLite store does not write`);
    return `${column} = ?`;
  });
  if (leaveKey) sets.push("key_pos = NULL");
  ctx
    .stmt(`UPDATE jobs SET ${sets.join(", ")} WHERE seq = ?`)
    .run(...fields.map((f) => patch[f] as number | string | Uint8Array), seq);
}
