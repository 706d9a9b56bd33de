/**
 * Per-queue totals of job movements this node has counted since it started, for the
 * public QueueStats.counters (the dashboard's throughput: rates are differences between
 * two reads). The same events as the Prometheus counters (metrics.ts), kept whether or
 * not metrics are served. A deleted queue's totals go when the queue is deleted through
 * this node; otherwise they stay until restart (a few numbers per queue name).
 */
import type { AckResult, JobCounters } from "./counters.js";

export interface QueueTotal {
  enqueued: number;
  succeeded: number;
  /** Failure acks and expired claims: failed attempts. */
  failed: number;
}

export class QueueTotals implements JobCounters {
  private readonly totals = new Map<string, QueueTotal>();

  /** `since`: when counting started (epoch ms), reported with every read. */
  constructor(readonly since: number) {}

  of(queue: string): QueueTotal {
    return this.totals.get(queue) ?? { enqueued: 0, succeeded: 0, failed: 0 };
  }

  forget(queue: string): void {
    this.totals.delete(queue);
  }

  enqueued(queue: string, jobs: number): void {
    this.entry(queue).enqueued += jobs;
  }

  handedOut(): void {}

  acked(queue: string, result: AckResult, jobs: number): void {
    if (result === "succeeded") this.entry(queue).succeeded += jobs;
    else if (result === "failed") this.entry(queue).failed += jobs;
  }

  claimsExpired(queue: string, jobs: number): void {
    this.entry(queue).failed += jobs;
  }

  retentionDeleted(): void {}

  private entry(queue: string): QueueTotal {
    let t = this.totals.get(queue);
    if (!t) this.totals.set(queue, (t = { enqueued: 0, succeeded: 0, failed: 0 }));
    return t;
  }
}

/** Reports every event to each of `counters` (Prometheus and the totals). */
export function allCounters(...counters: Array<JobCounters | undefined>): JobCounters {
  const each = counters.filter((c): c is JobCounters => c !== undefined);
  const all = (report: (c: JobCounters) => void) => {
    for (const c of each) report(c);
  };
  return {
    enqueued: (q, n) => all((c) => c.enqueued(q, n)),
    handedOut: (q, n) => all((c) => c.handedOut(q, n)),
    acked: (q, r, n) => all((c) => c.acked(q, r, n)),
    claimsExpired: (q, n) => all((c) => c.claimsExpired(q, n)),
    retentionDeleted: (q, n) => all((c) => c.retentionDeleted(q, n)),
  };
}
