/**
 * The Worker's defaults: the same in the TypeScript, Python and Java SDKs, with the
 * measurements behind each in docs/workers.md (a conformance scenario, worker-defaults,
 * checks that all three SDKs agree).
 */
export const workerDefaults = {
  /** Handlers running at once (per queue). */
  concurrency: 100,
  /** Shutdown grace: how long stop() lets running handlers finish. */
  shutdownGraceMs: 25_000,
  /** Longest time a finished job's outcome waits to share a message with others. */
  ackDelayMs: 5,
  /** Poll mode: long-poll wait of each Dequeue when nothing is due. */
  pollWaitMs: 20_000,
} as const;
