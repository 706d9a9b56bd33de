/**
 * The jobs table row ↔ JobRecord, and a transition's patch → SQL. Column names come from
 * the fixed map below, never from input; every value is a bound parameter.
 */
import type { JobRecord, NewJob, StoredState } from "../../domain/job-record.js";
import type { JobPatch } from "../../domain/transitions.js";
import { type Param, placeholders } from "./shard.js";

/** A stored field of JobRecord (bodySize is derived from the body, never written). */
type Field = Exclude<keyof JobRecord, "bodySize">;

/** JobRecord field → jobs column. */
const COLUMN: Record<Field, string> = {
  attempt: "attempt",
  attemptsAllowed: "attempts_allowed",
  attemptsRemaining: "attempts_remaining",
  body: "body",
  bufferEpoch: "buffer_epoch",
  claimExpiresAt: "claim_expires_at",
  claimToken: "claim_token",
  createdAt: "created_at",
  customStatus: "custom_status",
  finishedAt: "finished_at",
  id: "id",
  idempotencyKey: "idempotency_key",
  orderingKey: "ordering_key",
  partition: "part",
  priority: "priority",
  queue: "queue",
  retryDelayMs: "retry_delay_ms",
  runAfter: "run_after",
  seq: "seq",
  state: "state",
  updatedAt: "updated_at",
  workflow: "workflow",
  traceparent: "traceparent",
};

/** Every column but the body: what fences and decisions need. */
export const META_COLUMNS = Object.values(COLUMN)
  .filter((c) => c !== "body")
  .join(", ");
export const ALL_COLUMNS = `${META_COLUMNS}, body`;
/** Every column but the body, and the body's length (JobRecord.bodySize). */
export const META_AND_SIZE = `${META_COLUMNS}, LENGTH(body) AS body_bytes`;

export interface JobRow {
  id: string;
  queue: string;
  part: number;
  state: StoredState;
  priority: number;
  body?: Buffer | null;
  /** LENGTH(body), where a statement asks for it. */
  body_bytes?: number | string | null;
  run_after: number | string;
  attempts_allowed: number;
  attempts_remaining: number;
  attempt: number;
  custom_status: string;
  created_at: number | string;
  updated_at: number | string;
  finished_at: number | string;
  claim_token: string;
  claim_expires_at: number | string;
  retry_delay_ms: number | string;
  buffer_epoch: number | string;
  idempotency_key: string | null;
  /** VARBINARY: UTF-8 bytes, compared byte for byte (no collation pads or folds them). */
  ordering_key: Buffer | null;
  seq: number | string;
  /** The workflow context of a workflow job's run (migration 0008); NULL for any other job. */
  workflow: string | null;
  /** The W3C traceparent given at enqueue (migration 0010); NULL: none. */
  traceparent: string | null;
}

export function toRecord(row: JobRow): JobRecord {
  const job: JobRecord = {
    id: row.id,
    queue: row.queue,
    partition: Number(row.part),
    state: row.state,
    priority: Number(row.priority),
    body: row.body ? new Uint8Array(row.body.buffer, row.body.byteOffset, row.body.byteLength) : new Uint8Array(),
    runAfter: Number(row.run_after),
    attemptsAllowed: Number(row.attempts_allowed),
    attemptsRemaining: Number(row.attempts_remaining),
    attempt: Number(row.attempt),
    customStatus: row.custom_status,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    finishedAt: Number(row.finished_at),
    claimToken: row.claim_token,
    claimExpiresAt: Number(row.claim_expires_at),
    retryDelayMs: Number(row.retry_delay_ms),
    bufferEpoch: Number(row.buffer_epoch),
    idempotencyKey: row.idempotency_key ?? "",
    orderingKey: row.ordering_key ? row.ordering_key.toString("utf8") : "",
    seq: Number(row.seq),
    // Only a record read without its body says how big the body is (JobRecord.bodySize).
    ...(row.body === undefined && row.body_bytes != null ? { bodySize: Number(row.body_bytes) } : {}),
  };
  if (row.workflow != null) job.workflow = row.workflow;
  if (row.traceparent != null) job.traceparent = row.traceparent;
  return job;
}

/** A field's value as stored: no key is NULL (so it never collides), bodies are bytes. */
export function toParam(field: keyof JobRecord, value: JobRecord[keyof JobRecord]): Param {
  if (field === "idempotencyKey") return value === "" ? null : (value as string);
  if (field === "orderingKey") return value === "" ? null : keyBytes(value as string);
  if (value === undefined) return null; // (workflow, traceparent: none)
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return value as Param;
}

/** An ordering key as the VARBINARY columns hold it. */
export function keyBytes(key: string): Buffer {
  return Buffer.from(key, "utf8");
}

/** The INSERT columns and one row's values, for a new job (pending, or waiting behind its ordering key). */
export const INSERT_COLUMNS =
  "id, queue, part, state, priority, run_after, attempts_allowed, attempts_remaining, attempt, custom_status, " +
  "created_at, updated_at, finished_at, claim_token, claim_expires_at, retry_delay_ms, buffer_epoch, idempotency_key, ordering_key, workflow, traceparent, body";
export const INSERT_ROW = `(${placeholders(22)})`;

export function insertValues(job: NewJob, state: "pending" | "waiting", now: number): Param[] {
  return [
    job.id,
    job.queue,
    job.partition,
    state,
    job.priority,
    job.runAfter,
    job.attemptsAllowed,
    job.attemptsAllowed,
    0,
    job.customStatus,
    job.createdAt,
    now,
    0,
    "",
    0,
    0,
    0,
    toParam("idempotencyKey", job.idempotencyKey),
    toParam("orderingKey", job.orderingKey),
    job.workflow ?? null,
    job.traceparent ?? null,
    toParam("body", job.body),
  ];
}

/** `SET a = ?, b = ?` for one patch that every matched row gets (a job-independent transition). */
export function setClause(patch: JobPatch): { sql: string; params: Param[] } {
  const fields = Object.keys(patch) as Field[];
  return {
    sql: fields.map((f) => `${COLUMN[f]} = ?`).join(", "),
    params: fields.map((f) => toParam(f, patch[f]!)),
  };
}

/**
 * One UPDATE applying a different patch to each job: `col = CASE id WHEN ? THEN ? … ELSE col END`
 * per changed column, limited to the given ids and to `fence` (re-checked by the statement
 * itself, on rows the caller has already locked).
 */
export function patchManyStatement(
  patches: Array<{ id: string; patch: JobPatch }>,
  fence: { sql: string; params: Param[] },
): { sql: string; params: Param[] } {
  const fields = [...new Set(patches.flatMap((p) => Object.keys(p.patch) as Field[]))].sort();
  const params: Param[] = [];
  const sets = fields.map((field) => {
    const column = COLUMN[field];
    const arms = patches.filter((p) => field in p.patch);
    const values = arms.map((p) => toParam(field, p.patch[field]!));
    // One value for every job (state, finished_at, updated_at of an ACK batch): no CASE needed.
    if (arms.length === patches.length && values.every((v) => sameParam(v, values[0]!))) {
      params.push(values[0]!);
      return `${column} = ?`;
    }
    for (const [i, p] of arms.entries()) params.push(p.id, values[i]!);
    return `${column} = CASE id ${arms.map(() => "WHEN ? THEN ?").join(" ")} ELSE ${column} END`;
  });
  params.push(...patches.map((p) => p.id), ...fence.params);
  return {
    sql: `UPDATE jobs SET ${sets.join(", ")} WHERE id IN (${placeholders(patches.length)}) AND ${fence.sql}`,
    params,
  };
}

function sameParam(a: Param, b: Param): boolean {
  return Buffer.isBuffer(a) || Buffer.isBuffer(b) ? Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b) : a === b;
}
