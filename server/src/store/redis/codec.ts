/**
 * Decodes the scripts' replies. A job comes back positionally as { id, st, pr, ra, aa,
 * ar, at, cs, ca, ua, fa, ct, ce, rd, be, ik, sq, ok, b } (FIELDS of lua/include/job.lua, then
 * the body); absent fields are nil. Every string is a Buffer so the body is exact.
 */
import { parseJobId } from "../../engine/job-id.js";
import type { JobRecord, StoredState } from "../../engine/job-record.js";
import type { Outcome } from "../../engine/job-record.js";
import type { OutcomeResult } from "../store.js";

const states: Record<string, StoredState> = { p: "pending", w: "waiting", b: "buffered", r: "running", s: "succeeded", f: "failed" };

const num = (b: Buffer | null | undefined): number => (b ? Number(b.toString()) : 0);
const str = (b: Buffer | null | undefined): string => (b ? b.toString() : "");

export function decodeJob(reply: unknown): JobRecord {
  const v = reply as Array<Buffer | null>;
  const id = v[0]!.toString();
  const where = parseJobId(id);
  return {
    id,
    queue: where?.queue ?? "",
    partition: where?.partition ?? 0,
    state: states[str(v[1])] ?? "pending",
    priority: num(v[2]),
    runAfter: num(v[3]),
    attemptsAllowed: num(v[4]),
    attemptsRemaining: num(v[5]),
    attempt: num(v[6]),
    customStatus: str(v[7]),
    createdAt: num(v[8]),
    updatedAt: num(v[9]),
    finishedAt: num(v[10]),
    claimToken: str(v[11]),
    claimExpiresAt: num(v[12]),
    retryDelayMs: num(v[13]),
    bufferEpoch: num(v[14]),
    idempotencyKey: str(v[15]),
    seq: num(v[16]),
    orderingKey: str(v[17]),
    body: v[18] ? new Uint8Array(v[18]) : new Uint8Array(), // a copy: ioredis may reuse its buffer
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
