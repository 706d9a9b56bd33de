/**
 * Node's timers hold at most 2^31 − 1 ms (~24.8 days); a longer delay fires after 1 ms
 * with a TimeoutOverflowWarning, which would turn a far claim expiry or a huge configured
 * delay into a busy loop. Every worker timer goes through this: waits longer than the
 * most a timer holds end early, where each caller simply looks again.
 */
export const TIMER_DELAY_MAX_MS = 2 ** 31 - 1;

export function timerDelay(ms: number): number {
  return Number.isNaN(ms) ? 0 : Math.min(Math.max(0, ms), TIMER_DELAY_MAX_MS);
}
