/**
 * The job state machine: the only place that decides a job's next state.
 *
 *   pending ──claim──▶ buffered ──handOut──▶ running ──succeed──▶ succeeded
 *      ▲                  │                     │ fail / expire (attempts left)
 *      └───unbuffer───────┘                     ├──────────────────▶ pending (run_after = now + delay)
 *      ▲                                        │ fail / expire (none left) or noRetry
 *      └──── checkpoint(moveToPending) ─────────┤──────────────────▶ failed ──retryFailed──▶ pending
 *
 * Ordering keys add one state before pending: a job enqueued (or revived by retryFailed)
 * while its ordering key has a non-terminal job waits; when that job ends (succeeded,
 * failed, deleted) the store promotes the key's next job, in enqueue order:
 *
 *   enqueue / retryFailed (key busy) ──▶ waiting ──promote (the key's earlier jobs ended)──▶ pending
 *
 * Each function takes the job as the store holds it and returns the fields to change.
 * The memory store applies them directly; the Redis and MySQL stores implement the same
 * rules inside their single atomic script/statement, and the shared store suite
 * (server/test/storetest) pins that they agree.
 */

import type { JobRecord, Outcome, StoredState } from "./job-record.js";
import { limits } from "./limits.js";

export type JobPatch = Partial<JobRecord>;

/** ACK/checkpoint fence: only the holder of the current claim may change a running job. */
export function checkClaim(job: JobRecord | undefined, claimToken: string): Outcome {
  if (!job) return "not_found";
  if (job.state !== "running" || job.claimToken !== claimToken || claimToken === "") return "stale_claim";
  return "acknowledged";
}

/** Succeeded and failed jobs are done: they have left their ordering key's sequence. */
export function isTerminal(state: StoredState): boolean {
  return state === "succeeded" || state === "failed";
}

/**
 * Where a job enters (Enqueue, RetryFailedJobs): behind a non-terminal job of its
 * ordering key it waits, else it is pending. `keyBusy` is false for jobs without a key.
 */
export function arrivalState(keyBusy: boolean): "pending" | "waiting" {
  return keyBusy ? "waiting" : "pending";
}

/** The key's earlier jobs all ended: the next one becomes claimable at its own run_after. */
export function promote(now: number): JobPatch {
  return { state: "pending", updatedAt: now };
}

/**
 * A broker prefetches a due pending job into its buffer (charges nothing). Users see a
 * buffered job as pending, so its updatedAt stays: nothing they can see changed (and a
 * store may keep the buffered state in the claiming process's memory: MySQL does).
 */
export function claimIntoBuffer(epoch: number): JobPatch {
  return { state: "buffered", bufferEpoch: epoch };
}

/** A buffered job goes back to pending (buffer overflow, shutdown, or a new lease owner); updatedAt stays, as for claimIntoBuffer. */
export function unbuffer(): JobPatch {
  return { state: "pending", bufferEpoch: 0 };
}

/** What the broker decides when it hands a buffered job to a worker. */
export interface HandOutPlan {
  id: string;
  claimToken: string;
  claimExpiresAt: number;
  /** Delay before the next attempt should this one fail without a retry_delay. */
  retryDelayMs: number;
}

/** Handing out charges one attempt and starts the claim. */
export function handOut(job: JobRecord, plan: HandOutPlan, now: number): JobPatch {
  return {
    state: "running",
    attempt: job.attempt + 1,
    attemptsRemaining: Math.max(0, job.attemptsRemaining - 1),
    claimToken: plan.claimToken,
    claimExpiresAt: plan.claimExpiresAt,
    retryDelayMs: plan.retryDelayMs,
    bufferEpoch: 0,
    updatedAt: now,
  };
}

export function succeed(job: JobRecord, customStatus: string, now: number): JobPatch {
  return {
    state: "succeeded",
    customStatus: appendStatus(job.customStatus, customStatus),
    claimExpiresAt: 0,
    finishedAt: now,
    updatedAt: now,
  };
}

export interface FailureInput {
  customStatus: string;
  /** The worker's delayed NACK; undefined lets the retry policy decide. */
  retryDelayMs?: number;
  noRetry: boolean;
}

/** A failed attempt: back to pending after a delay if attempts remain, else failed. */
export function fail(job: JobRecord, input: FailureInput, now: number): JobPatch {
  const status = appendStatus(job.customStatus, input.customStatus);
  if (input.noRetry || job.attemptsRemaining <= 0) {
    return { state: "failed", customStatus: status, claimExpiresAt: 0, finishedAt: now, updatedAt: now };
  }
  return {
    state: "pending",
    customStatus: status,
    runAfter: now + (input.retryDelayMs ?? job.retryDelayMs),
    claimToken: "",
    claimExpiresAt: 0,
    updatedAt: now,
  };
}

/** A claim that ran out counts as a failed attempt with the policy's delay. */
export function expireClaim(job: JobRecord, now: number): JobPatch {
  return fail(job, { customStatus: `attempt ${job.attempt}: claim timed out`, noRetry: false }, now);
}

export interface CheckpointInput {
  /** New claim expiry (absolute); used unless moving to pending. */
  claimExpiresAt: number;
  newBody?: Uint8Array;
  moveToPending: boolean;
  /** With moveToPending: when the job becomes due (absolute). */
  runAfter: number;
  /** 0 leaves attempts unchanged. */
  attemptsAllowed: number;
  customStatus: string;
}

export function checkpoint(job: JobRecord, input: CheckpointInput, now: number): JobPatch {
  const patch: JobPatch = { customStatus: appendStatus(job.customStatus, input.customStatus), updatedAt: now };
  if (input.newBody !== undefined) patch.body = input.newBody;
  if (input.moveToPending) {
    // Released, not failed: the attempt charged at hand-out is given back.
    const allowed = input.attemptsAllowed || job.attemptsAllowed;
    const remaining = input.attemptsAllowed ? input.attemptsAllowed : Math.min(allowed, job.attemptsRemaining + 1);
    return {
      ...patch,
      state: "pending",
      runAfter: input.runAfter,
      attemptsAllowed: allowed,
      attemptsRemaining: remaining,
      attempt: input.attemptsAllowed ? 0 : Math.max(0, job.attempt - 1),
      claimToken: "",
      claimExpiresAt: 0,
    };
  }
  patch.claimExpiresAt = input.claimExpiresAt;
  if (input.attemptsAllowed) {
    // The running attempt counts as the first of the new allowance.
    patch.attemptsAllowed = input.attemptsAllowed;
    patch.attemptsRemaining = input.attemptsAllowed - 1;
    patch.attempt = 1;
  }
  return patch;
}

/**
 * RetryFailedJobs: a failed job gets a fresh set of attempts. A job with an ordering key
 * re-enters its key's sequence at the tail, so it waits if the key is busy.
 */
export function retryFailed(attemptsAllowed: number, runAfter: number, now: number, keyBusy = false): JobPatch {
  return {
    state: arrivalState(keyBusy),
    attemptsAllowed,
    attemptsRemaining: attemptsAllowed,
    attempt: 0,
    runAfter,
    claimToken: "",
    claimExpiresAt: 0,
    finishedAt: 0,
    updatedAt: now,
  };
}

/**
 * Custom status grows by lines; past the limit, counted in characters (Unicode code
 * points, not UTF-16 units or bytes), the oldest characters are cut, whole: the status is
 * never invalid Unicode.
 */
export function appendStatus(existing: string, addition: string): string {
  if (addition === "") return existing;
  const joined = existing === "" ? addition : `${existing}\n${addition}`;
  const max = limits.customStatusMaxLength;
  if (joined.length <= max) return joined; // fewer units than the limit: fewer characters too
  // Walk back from the end over `max` characters; a surrogate pair is one character.
  let start = joined.length;
  for (let kept = 0; kept < max && start > 0; kept++) {
    const low = joined.charCodeAt(start - 1);
    const pair =
      low >= 0xdc00 &&
      low <= 0xdfff &&
      start >= 2 &&
      joined.charCodeAt(start - 2) >= 0xd800 &&
      joined.charCodeAt(start - 2) <= 0xdbff;
    start -= pair ? 2 : 1;
  }
  return joined.slice(start);
}

/** Users see waiting and buffered jobs as pending. */
export function visibleState(state: StoredState): "pending" | "running" | "succeeded" | "failed" {
  return state === "buffered" || state === "waiting" ? "pending" : state;
}
