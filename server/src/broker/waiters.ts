import { ArrivalList } from "../domain/arrival-list.js";

/**
 * Long-poll waiters of one queue: woken by refills, enqueue notifications and config
 * changes. In an ArrivalList, not a Set: one comes and goes with every long poll
 * (domain/arrival-list.ts says why that matters).
 */
export class Waiters {
  private readonly waiting = new ArrivalList<() => void>();

  get size(): number {
    return this.waiting.size;
  }

  /** Resolves on the next wake(), after `ms`, or when `signal` aborts, whichever is first. */
  wait(
    ms: number,
    signal: AbortSignal | undefined,
    setTimer: (ms: number, fn: () => void) => () => void,
  ): Promise<void> {
    return new Promise((resolve) => {
      let cancelTimer: (() => void) | undefined;
      const done = () => {
        this.waiting.remove(entry);
        cancelTimer?.();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const entry = this.waiting.add(done);
      cancelTimer = setTimer(ms, done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  wakeAll(): void {
    for (const done of this.waiting.values()) done();
  }
}
