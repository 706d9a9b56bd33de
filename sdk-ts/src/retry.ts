/**
 * Worker-side retry policies: how long to wait before retrying a job whose handler threw.
 *
 * A policy is just a function from the attempt that failed (1 = the first attempt) to a
 * delay in milliseconds. A Worker without one sends failures with no retry_delay, so the
 * queue's own RetryPolicy decides, which is usually what you want; a policy here
 * overrides the delay per attempt (the delayed NACK). Attempts are still counted by the
 * server: a policy never keeps a job alive past its attempts_allowed.
 */

/** attempt that failed (1-based) → delay in ms before the next attempt. */
export type RetryPolicy = (attempt: number) => number;

/** The same delay before every retry. */
export function constant(delayMs: number): RetryPolicy {
  checkDelay("delayMs", delayMs);
  return () => delayMs;
}

/** stepMs × n before retry n (n = the attempt that failed), capped at maxMs. */
export function linear(stepMs: number, maxMs = Number.POSITIVE_INFINITY): RetryPolicy {
  checkDelay("stepMs", stepMs);
  return (attempt) => Math.min(stepMs * atLeastOne(attempt), maxMs);
}

/** baseMs × 2^(n−1) before retry n (base, 2×base, 4×base, …), capped at maxMs. */
export function exponential(baseMs: number, maxMs = Number.POSITIVE_INFINITY): RetryPolicy {
  checkDelay("baseMs", baseMs);
  // Clamp the exponent: 2^1000 is Infinity, and Infinity × 0 would be NaN.
  return (attempt) => Math.min(baseMs * 2 ** Math.min(atLeastOne(attempt) - 1, 60), maxMs);
}

/**
 * PinLater's production policy, the formula of runlater.v1.RetryPolicy with its
 * defaults: 5 s × n for n ≤ 5, then 25 s × 2^(n−5), capped at 1 h
 * (5, 10, 15, 20, 25, 50, 100, 200, 400, 800 s, …).
 */
export function pinlaterDefault(): RetryPolicy {
  const initialMs = 5_000;
  const linearSteps = 5;
  const maxMs = 3_600_000;
  return (attempt) => {
    const n = atLeastOne(attempt);
    if (n <= linearSteps) return Math.min(initialMs * n, maxMs);
    return Math.min(initialMs * linearSteps * 2 ** Math.min(n - linearSteps, 60), maxMs);
  };
}

function atLeastOne(attempt: number): number {
  return Number.isFinite(attempt) ? Math.max(1, Math.floor(attempt)) : 1;
}

function checkDelay(name: string, ms: number): void {
  if (!Number.isFinite(ms) || ms < 0)
    throw new RangeError(`${name} must be a finite number of milliseconds ≥ 0, got ${ms}`);
}
