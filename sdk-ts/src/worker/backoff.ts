/**
 * Waiting helpers for the worker's retry loops: an abortable sleep and a capped,
 * jittered exponential backoff (so a fleet of workers does not hammer a server that is
 * coming back up in lockstep).
 */
import { timerDelay } from "./timer-delay.js";

/** Resolves after ms, or early (without throwing) when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, timerDelay(ms));
    signal?.addEventListener("abort", done, { once: true });
  });
}

export class Backoff {
  private failures = 0;
  constructor(
    private readonly initialMs = 100,
    private readonly maxMs = 5_000,
  ) {}

  /** The next delay: initial × 2^failures, capped, with ±20 % jitter. */
  next(): number {
    const base = Math.min(this.initialMs * 2 ** Math.min(this.failures, 30), this.maxMs);
    this.failures++;
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  reset(): void {
    this.failures = 0;
  }
}
