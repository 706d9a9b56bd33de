/**
 * Decodes the scripts' replies. A job comes back as one Buffer (packRecord in
 * lua/include/job.lua): a header line "<id> <st> <pr> <ra> <aa> <ar> <at> <ca> <ua> <fa>
 * <ct> <ce> <rd> <be> <sq> <#cs> <#ik> <#ok>" (absent fields empty), a newline, then the
 * custom status, idempotency key, ordering key and body back to back, their lengths in
 * bytes from the header.
 */
import { parseJobId } from "../../engine/job-id.js";
import type { JobRecord, StoredState } from "../../engine/job-record.js";
import type { Outcome } from "../../engine/job-record.js";
import type { OutcomeResult } from "../store.js";

const states: Record<string, StoredState> = { p: "pending", w: "waiting", b: "buffered", r: "running", s: "succeeded", f: "failed" };
const NEWLINE = 0x0a;

export function decodeJob(reply: unknown): JobRecord {
  const b = reply as Buffer;
  const end = b.indexOf(NEWLINE);
  if (end < 0) throw new Error("redis store: malformed job record");
  const h = b.toString("latin1", 0, end).split(" ");
  const n = (i: number): number => (h[i] ? Number(h[i]) : 0);
  const id = h[0]!;
  const where = parseJobId(id);
  let at = end + 1;
  const take = (length: number): string => b.toString("utf8", at, (at += length));
  const customStatus = take(n(15));
  const idempotencyKey = take(n(16));
  const orderingKey = take(n(17));
  return {
    id,
    queue: where?.queue ?? "",
    partition: where?.partition ?? 0,
    state: states[h[1]!] ?? "pending",
    priority: n(2),
    runAfter: n(3),
    attemptsAllowed: n(4),
    attemptsRemaining: n(5),
    attempt: n(6),
    customStatus,
    createdAt: n(7),
    updatedAt: n(8),
    finishedAt: n(9),
    claimToken: h[10] ?? "",
    claimExpiresAt: n(11),
    retryDelayMs: n(12),
    bufferEpoch: n(13),
    idempotencyKey,
    seq: n(14),
    orderingKey,
    body: new Uint8Array(b.subarray(at)), // a copy: ioredis may reuse its buffer
  };
}

export function decodeJobs(reply: unknown): JobRecord[] {
  return (reply as unknown[]).map(decodeJob);
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
