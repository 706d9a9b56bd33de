/**
 * Turns what a handler returned or threw into what the worker reports, following the
 * control-flow vocabulary of control.ts.
 */
import { DoNotRetry, RetryAfter, Snooze, Success, type SuccessOptions, success } from "../control.js";
import type { RetryPolicy } from "../retry.js";

export type JobOutcome =
  | { kind: "success"; customStatus: string; result?: Uint8Array; noEvents?: boolean }
  | { kind: "failure"; customStatus: string; retryDelayMs: number | undefined; noRetry: boolean }
  | { kind: "snooze"; delayMs: number; customStatus: string };

/** Throws (RangeError, TypeError) for an output out of bounds: the caller fails the attempt. */
export function outcomeOfResult(result: unknown): JobOutcome {
  if (result instanceof Snooze)
    return { kind: "snooze", delayMs: Math.max(0, result.delayMs), customStatus: result.customStatus };
  if (typeof result === "string") return { kind: "success", customStatus: result };
  // A plain { customStatus, result, noEvents } works as well as success({...}).
  const s = result instanceof Success ? result : isSuccessOptions(result) ? success(result) : undefined;
  if (s) return { kind: "success", customStatus: s.customStatus, result: s.result, noEvents: s.noEvents };
  return { kind: "success", customStatus: "" };
}

function isSuccessOptions(value: unknown): value is SuccessOptions {
  return (
    typeof value === "object" && value !== null && ("customStatus" in value || "result" in value || "noEvents" in value)
  );
}

/**
 * attempt is the attempt that failed; the policy (if any) picks the delay before the next.
 * The custom status is the error's message (its name if the message is empty), cut to
 * maxStatusChars, as in the Python and Java SDKs.
 */
export function outcomeOfError(
  err: unknown,
  attempt: number,
  policy: RetryPolicy | undefined,
  maxStatusChars: number,
): JobOutcome {
  const customStatus = truncate(
    err instanceof DoNotRetry || err instanceof RetryAfter ? err.message : messageOf(err),
    maxStatusChars,
  );
  if (err instanceof DoNotRetry) return { kind: "failure", customStatus, retryDelayMs: undefined, noRetry: true };
  if (err instanceof RetryAfter)
    return { kind: "failure", customStatus, retryDelayMs: Math.max(0, err.delayMs), noRetry: false };
  // No policy: leave retry_delay unset so the queue's own retry policy decides.
  const retryDelayMs = policy ? Math.max(0, policy(attempt)) : undefined;
  return { kind: "failure", customStatus, retryDelayMs, noRetry: false };
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
