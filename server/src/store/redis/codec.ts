/**
 * Decodes the scripts' replies. A job comes back as one Buffer (packRecord in
 * lua/include/job.lua): its id, a space, then the stored job: the packed attributes (META
 * there: the state as one byte, five little-endian doubles, the claim token as a 4-byte
 * little-endian length and TOKEN_WIDTH bytes, eight doubles, three texts each a 4-byte
 * length and its bytes), then the body. The claim sends ids and stored strings apart.
 */
import { parseJobId } from "../../engine/job-id.js";
import { limits } from "../../engine/limits.js";
import type { JobRecord, NewJob, StoredState } from "../../engine/job-record.js";
import type { Outcome } from "../../engine/job-record.js";
import type { OutcomeResult } from "../store.js";

const states: Record<string, StoredState> = { p: "pending", w: "waiting", b: "buffered", r: "running", s: "succeeded", f: "failed" };
const SPACE = 0x20;
/** TOKEN_WIDTH of lua/include/job.lua: the claim token's fixed width in the packed attributes. */
export const TOKEN_WIDTH = limits.claimTokenMaxBytes;

/** With `withoutBody` the record is one recordWithoutBody made (lua/include/job.lua): the body's length instead of the body. */
export function decodeJob(reply: unknown, withoutBody = false): JobRecord {
  const b = reply as Buffer;
  const space = b.indexOf(SPACE);
  if (space < 0) throw new Error("redis store: malformed job record");
  return decodeStored(b.toString("latin1", 0, space), b, space + 1, withoutBody);
}

/** The job `id` stored as `b` from `start` on: packed attributes (META in lua/include/job.lua), then the body (or its length). */
export function decodeStored(id: string, b: Buffer, start = 0, withoutBody = false): JobRecord {
  const where = parseJobId(id);
  let at = start;
  const state = states[String.fromCharCode(b[at++]!)] ?? "pending";
  const num = (): number => {
    const value = b.readDoubleLE(at);
    at += 8;
    return value;
  };
  const text = (): string => {
    const length = b.readUInt32LE(at);
    at += 4;
    return b.toString("utf8", at, (at += length));
  };
  // Read in META's order.
  const bufferEpoch = num();
  num(); // the buffer batch: the store's own bookkeeping (lua/include/job.lua)
  const claimExpiresAt = num();
  const updatedAt = num();
  const finishedAt = num();
  const tokenLength = b.readUInt32LE(at);
  const claimToken = b.toString("latin1", at + 4, at + 4 + tokenLength);
  at += 4 + TOKEN_WIDTH;
  const attempt = num();
  const attemptsRemaining = num();
  const retryDelayMs = num();
  const priority = num();
  const runAfter = num();
  const attemptsAllowed = num();
  const createdAt = num();
  const seq = num();
  const orderingKey = text();
  const idempotencyKey = text();
  const customStatus = text();
  return {
    id,
    queue: where?.queue ?? "",
    partition: where?.partition ?? 0,
    state,
    priority,
    runAfter,
    attemptsAllowed,
    attemptsRemaining,
    attempt,
    customStatus,
    createdAt,
    updatedAt,
    finishedAt,
    claimToken,
    claimExpiresAt,
    retryDelayMs,
    bufferEpoch,
    idempotencyKey,
    seq,
    orderingKey,
    ...(withoutBody ? { body: new Uint8Array(), bodySize: b.readDoubleLE(at) } : { body: new Uint8Array(b.subarray(at)) }), // a copy: ioredis may reuse its buffer
  };
}

/**
 * A new job's fields for job_insert_many.lua (NEW_JOB there): queue, partition, priority,
 * run_after, attempts_allowed, created_at, custom_status, idempotency_key, ordering_key;
 * numbers as little-endian doubles, texts as a 4-byte little-endian length and UTF-8.
 */
export function encodeNewJob(j: NewJob): Buffer {
  // One allocation per job: texts are measured, then written in place.
  const texts = [j.queue, j.customStatus, j.idempotencyKey, j.orderingKey];
  let size = 4 * texts.length + 5 * 8;
  for (const t of texts) size += Buffer.byteLength(t, "utf8");
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  const text = (t: string) => {
    const length = out.write(t, at + 4, "utf8");
    out.writeUInt32LE(length, at);
    at += 4 + length;
  };
  text(j.queue);
  at = out.writeDoubleLE(j.partition, at);
  at = out.writeDoubleLE(j.priority, at);
  at = out.writeDoubleLE(j.runAfter, at);
  at = out.writeDoubleLE(j.attemptsAllowed, at);
  at = out.writeDoubleLE(j.createdAt, at);
  text(j.customStatus);
  text(j.idempotencyKey);
  text(j.orderingKey);
  return out;
}

export function decodeJobs(reply: unknown, withoutBody = false): JobRecord[] {
  return (reply as unknown[]).map((r) => decodeJob(r, withoutBody));
}

const outcomes: Record<string, Outcome> = { a: "acknowledged", s: "stale_claim", n: "not_found" };

/** "a", "a:<pendingAt>", "a+<promotedAt>" (it let its ordering key's next job go), "s" or "n". */
export function decodeOutcome(reply: Buffer): OutcomeResult {
  const text = reply.toString();
  const result: OutcomeResult = { outcome: outcomes[text[0]!] ?? "not_found" };
  if (text[1] === ":") result.pendingAt = Number(text.slice(2));
  else if (text[1] === "+") result.promotedAt = Number(text.slice(2));
  return result;
}

export function text(reply: unknown): string {
  return Buffer.isBuffer(reply) ? reply.toString() : String(reply);
}
