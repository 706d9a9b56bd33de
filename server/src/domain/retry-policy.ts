/**
 * The queue's retry policy: the delay before attempt n+1 after attempt n failed.
 *   delay(n) = initial × n                          for n ≤ linearSteps
 *   delay(n) = initial × linearSteps × 2^(n − linearSteps)   after that
 * capped at maxDelay. PinLater's production policy: with the defaults (5 s, 5, 1 h) the
 * ten retries wait 5, 10, 15, 20, 25, 50, 100, 200, 400, 800 s.
 */
export interface RetryPolicy {
  initialDelayMs: number;
  linearSteps: number;
  maxDelayMs: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  initialDelayMs: 5_000,
  linearSteps: 5,
  maxDelayMs: 3_600_000,
};

export function retryDelayMs(policy: RetryPolicy, attempt: number): number {
  const n = Math.max(1, attempt);
  const delay =
    n <= policy.linearSteps
      ? policy.initialDelayMs * n
      : policy.initialDelayMs * Math.max(1, policy.linearSteps) * 2 ** (n - policy.linearSteps);
  return Math.min(delay, policy.maxDelayMs);
}
