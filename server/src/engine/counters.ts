/**
 * What the engine and maintenance report as jobs move, for metrics (metrics.ts implements
 * it with Prometheus counters). Each node reports what it did itself: a broker answering a
 * forwarded Dequeue does not count the hand-out again (the node the worker called does).
 */
export type AckResult = "succeeded" | "failed" | "stale_claim" | "not_found";

export interface JobCounters {
  enqueued(queue: string, jobs: number): void;
  handedOut(queue: string, jobs: number): void;
  acked(queue: string, result: AckResult, jobs: number): void;
  claimsExpired(queue: string, jobs: number): void;
  retentionDeleted(queue: string, jobs: number): void;
}

/** Counts nothing: the default when a server runs without metrics (and in unit tests). */
export const noCounters: JobCounters = {
  enqueued: () => {},
  handedOut: () => {},
  acked: () => {},
  claimsExpired: () => {},
  retentionDeleted: () => {},
};

/** Adds one to `key`'s count: for reporting a batch once per queue. */
export function tally<K>(counts: Map<K, number>, key: K, n = 1): Map<K, number> {
  counts.set(key, (counts.get(key) ?? 0) + n);
  return counts;
}
