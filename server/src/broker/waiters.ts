/** Long-poll waiters of one queue: woken by refills, enqueue notifications and config changes. */
export class Waiters {
  private readonly waiting = new Set<() => void>();

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
      const done = () => {
        this.waiting.delete(done);
        cancelTimer();
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const cancelTimer = setTimer(ms, done);
      signal?.addEventListener("abort", done, { once: true });
      this.waiting.add(done);
    });
  }

  wakeAll(): void {
    for (const done of [...this.waiting]) done();
  }
}
