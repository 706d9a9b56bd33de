/**
 * Decodes the scripts' replies. A job comes back as one Buffer (packRecord in
 * lua/include/job_record.lua): its id, a space, then the stored job: the packed attributes (META
 * there: the state as one byte, a little-endian double, a 4-byte counter, three doubles,
 * the claim token as a 1-byte length and TOKEN_WIDTH bytes, eight doubles, three texts
 * each a 4-byte length and its bytes; for a job with a workflow context or a traceparent,
 * EXTRAS_FLAG added to the token's length and the two as a fourth and a fifth text, ""
 * for the one it lacks), then the body. The claim sends
 * ids and stored strings apart.
 */
import { parseJobId } from "../../domain/job-id.js";
import type { JobRecord, NewJob, Outcome, StoredState } from "../../domain/job-record.js";
import { limits } from "../../domain/limits.js";
import type { AckResultRecord, OutcomeResult } from "../store.js";

const states: Record<string, StoredState> = {
  p: "pending",
  w: "waiting",
  b: "buffered",
  r: "running",
  s: "succeeded",
  f: "failed",
};
const SPACE = 0x20;
const PENDING = 0x70; // "p"
/** TOKEN_WIDTH of lua/include/job_record.lua: the claim token's fixed width in the packed attributes. */
export const TOKEN_WIDTH = limits.claimTokenMaxBytes;
/** EXTRAS_FLAG of lua/include/job_record.lua: added to the token's length byte of a job with a workflow context or a traceparent. */
const EXTRAS_FLAG = 0x80;

/** With `withoutBody` the record is one recordWithoutBody made (lua/include/job_record.lua): the body's length instead of the body. */
export function decodeJob(reply: unknown, withoutBody = false): JobRecord {
  const b = reply as Buffer;
  const space = b.indexOf(SPACE);
  if (space < 0) throw new Error("redis store: malformed job record");
  return decodeStored(b.toString("latin1", 0, space), b, space + 1, withoutBody);
}

// Where each attribute sits from the start of a stored job (META in lua/include/job_record.lua):
// the state byte, doubles and the token slot have fixed places; three texts follow.
const BE = 1; // buffer epoch; the buffer batch (4 bytes, this store's own) follows at 9
const CE = 13;
const UA = 21;
const FA = 29;
const TOKEN = 37; // a 1-byte length, then the TOKEN_WIDTH slot
const AT = TOKEN + 1 + TOKEN_WIDTH;
const AR = AT + 8;
const RD = AR + 8;
const PR = RD + 8;
const RA = PR + 8;
const AA = RA + 8;
const CA = AA + 8;
const SQ = CA + 8;
const TEXTS = SQ + 8;

/**
 * The job `id` stored as `b` from `start` on: packed attributes, then the body (or, with
 * `withoutBody`, its length). `where` (the id's queue and partition) is parsed from the id
 * unless the caller knows it. No closures: this runs for every job a claim returns.
 */
export function decodeStored(id: string, b: Buffer, start = 0, withoutBody = false, where = parseJobId(id)): JobRecord {
  const lengthByte = b[start + TOKEN]!;
  const tokenLength = lengthByte & ~EXTRAS_FLAG;
  let at = start + TEXTS;
  const orderingKey = readText(b, at);
  at += 4 + b.readUInt32LE(at);
  const idempotencyKey = readText(b, at);
  at += 4 + b.readUInt32LE(at);
  const customStatus = readText(b, at);
  at += 4 + b.readUInt32LE(at);
  let workflow = "";
  let traceparent = "";
  if (lengthByte & EXTRAS_FLAG) {
    workflow = readText(b, at);
    at += 4 + b.readUInt32LE(at);
    traceparent = readText(b, at);
    at += 4 + b.readUInt32LE(at);
  }
  const job: JobRecord = {
    id,
    queue: where?.queue ?? "",
    partition: where?.partition ?? 0,
    state: states[String.fromCharCode(b[start]!)] ?? "pending",
    priority: b.readDoubleLE(start + PR),
    runAfter: b.readDoubleLE(start + RA),
    attemptsAllowed: b.readDoubleLE(start + AA),
    attemptsRemaining: b.readDoubleLE(start + AR),
    attempt: b.readDoubleLE(start + AT),
    customStatus,
    createdAt: b.readDoubleLE(start + CA),
    updatedAt: b.readDoubleLE(start + UA),
    finishedAt: b.readDoubleLE(start + FA),
    claimToken: b.toString("latin1", start + TOKEN + 1, start + TOKEN + 1 + tokenLength),
    claimExpiresAt: b.readDoubleLE(start + CE),
    retryDelayMs: b.readDoubleLE(start + RD),
    bufferEpoch: b.readDoubleLE(start + BE),
    idempotencyKey,
    seq: b.readDoubleLE(start + SQ),
    orderingKey,
    ...(withoutBody
      ? { body: new Uint8Array(), bodySize: b.readDoubleLE(at) }
      : { body: new Uint8Array(b.subarray(at)) }), // a copy: ioredis may reuse its buffer
  };
  if (workflow !== "") job.workflow = workflow;
  if (traceparent !== "") job.traceparent = traceparent;
  return job;
}

/** A text at `at`: a 4-byte little-endian length, then UTF-8 (most are empty: no decoding then). */
function readText(b: Buffer, at: number): string {
  const length = b.readUInt32LE(at);
  return length === 0 ? "" : b.toString("utf8", at + 4, at + 4 + length);
}

/**
 * A new job's stored prefix (META in lua/include/job_record.lua), as decodeStored reads it:
 * pending, updated `now`, never buffered, claimed or finished, no attempt yet, seq 0 (the
 * insert script numbers the job and writes its seq and, for a job behind its ordering key,
 * its state over these bytes). Packing it here rather than in Lua took a seventh of Redis's
 * instructions per inserted job.
 */
export function encodeNewJob(j: NewJob, now: number): Buffer {
  const texts = [j.orderingKey, j.idempotencyKey, j.customStatus];
  // A workflow job's context and a traceparent are a fourth and a fifth text, flagged in
  // the token's length byte; a job with neither carries neither.
  const extras = j.workflow !== undefined || j.traceparent !== undefined;
  if (extras) texts.push(j.workflow ?? "", j.traceparent ?? "");
  let size = TEXTS + 4 * texts.length;
  for (const t of texts) size += Buffer.byteLength(t, "utf8");
  const out = Buffer.alloc(size); // zeroed: buffer epoch and batch, claim, token, finished_at, attempt, retry delay, seq
  out[0] = PENDING;
  if (extras) out[TOKEN] = EXTRAS_FLAG;
  out.writeDoubleLE(now, UA);
  out.writeDoubleLE(j.attemptsAllowed, AR);
  out.writeDoubleLE(j.priority, PR);
  out.writeDoubleLE(j.runAfter, RA);
  out.writeDoubleLE(j.attemptsAllowed, AA);
  out.writeDoubleLE(j.createdAt, CA);
  let at = TEXTS;
  for (const t of texts) at = writeText(out, at, t);
  return out;
}

/** Writes a 4-byte length and the UTF-8 text at `at`; returns where the next field starts. (No closure per job.) */
function writeText(out: Buffer, at: number, t: string): number {
  const length = out.write(t, at + 4, "utf8");
  out.writeUInt32LE(length, at);
  return at + 4 + length;
}

export function decodeJobs(reply: unknown, withoutBody = false): JobRecord[] {
  return (reply as unknown[]).map((r) => decodeJob(r, withoutBody));
}

const outcomes: Record<string, Outcome> = { a: "acknowledged", s: "stale_claim", n: "not_found" };

/** The outcomes an ACK script returns, joined by spaces (one reply element, not one per job). */
export function decodeOutcomes(reply: unknown): OutcomeResult[] {
  const text = (reply as Buffer).toString("latin1");
  return text === "" ? [] : text.split(" ").map(decodeOutcome);
}

/**
 * What job_complete_many.lua and job_fail_many.lua return: the outcomes (decodeOutcomes),
 * or, when some job is a workflow job ("w"), { outcomes, context, … } with each such job's
 * workflow context in order.
 */
export function decodeAckOutcomes(reply: unknown): AckResultRecord[] {
  if (Buffer.isBuffer(reply)) return decodeOutcomes(reply);
  const [text, ...contexts] = reply as Buffer[];
  let next = 0;
  return text!
    .toString("latin1")
    .split(" ")
    .map((t) => (t === "w" ? { outcome: "workflow", workflow: contexts[next++]!.toString("utf8") } : decodeOutcome(t)));
}

/** "a", "a:<pendingAt>", "a+<promotedAt>" (it let its ordering key's next job go), "s" or "n". */
export function decodeOutcome(text: string): OutcomeResult {
  const result: OutcomeResult = { outcome: outcomes[text[0]!] ?? "not_found" };
  if (text[1] === ":") result.pendingAt = Number(text.slice(2));
  else if (text[1] === "+") result.promotedAt = Number(text.slice(2));
  return result;
}

export function text(reply: unknown): string {
  return Buffer.isBuffer(reply) ? reply.toString() : String(reply);
}
