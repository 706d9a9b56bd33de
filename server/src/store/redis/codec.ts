/**
 * Decodes the scripts' replies. A job comes back as { id, field, value, ... } (its hash,
 * field names as in lua/include/job.lua), every string a Buffer so the body is exact.
 */
import { parseJobId } from "../../engine/job-id.js";
import type { JobRecord, StoredState } from "../../engine/job-record.js";
import type { Outcome } from "../../engine/job-record.js";
import type { OutcomeResult } from "../store.js";

const states: Record<string, StoredState> = { p: "pending", b: "buffered", r: "running", s: "succeeded", f: "failed" };

const numeric = {
  pr: "priority",
  ra: "runAfter",
  aa: "attemptsAllowed",
  ar: "attemptsRemaining",
  at: "attempt",
  ca: "createdAt",
  ua: "updatedAt",
  fa: "finishedAt",
  ce: "claimExpiresAt",
  rd: "retryDelayMs",
  be: "bufferEpoch",
  sq: "seq",
} as const satisfies Record<string, keyof JobRecord>;

export function decodeJob(reply: unknown): JobRecord {
  const parts = reply as Buffer[];
  const id = parts[0]!.toString();
  const where = parseJobId(id);
  const job: JobRecord = {
    id,
    queue: where?.queue ?? "",
    partition: where?.partition ?? 0,
    state: "pending",
    priority: 0,
    body: new Uint8Array(),
    runAfter: 0,
    attemptsAllowed: 0,
    attemptsRemaining: 0,
    attempt: 0,
    customStatus: "",
    createdAt: 0,
    updatedAt: 0,
    finishedAt: 0,
    claimToken: "",
    claimExpiresAt: 0,
    retryDelayMs: 0,
    bufferEpoch: 0,
    idempotencyKey: "",
    seq: 0,
  };
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const field = parts[i]!.toString();
    const value = parts[i + 1]!;
    if (field in numeric) job[numeric[field as keyof typeof numeric]] = Number(value.toString());
    else if (field === "st") job.state = states[value.toString()] ?? "pending";
    else if (field === "b") job.body = new Uint8Array(value); // a copy: ioredis may reuse its buffer
    else if (field === "cs") job.customStatus = value.toString();
    else if (field === "ct") job.claimToken = value.toString();
    else if (field === "ik") job.idempotencyKey = value.toString();
  }
  return job;
}

export function decodeJobs(reply: unknown): JobRecord[] {
  return (reply as unknown[]).map(decodeJob);
}

const outcomes: Record<string, Outcome> = { a: "acknowledged", s: "stale_claim", n: "not_found" };

/** "a", "a:<pendingAt>", "s" or "n". */
export function decodeOutcome(reply: Buffer): OutcomeResult {
  const [code, pendingAt] = reply.toString().split(":");
  const result: OutcomeResult = { outcome: outcomes[code!] ?? "not_found" };
  if (pendingAt !== undefined) result.pendingAt = Number(pendingAt);
  return result;
}

export function text(reply: unknown): string {
  return Buffer.isBuffer(reply) ? reply.toString() : String(reply);
}
