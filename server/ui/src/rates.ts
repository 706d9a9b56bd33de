/**
 * Throughput from the server's counters (QueueStats.counters: totals the answering node
 * has counted since it started): a rate is the difference between two reads over the time
 * between them. A read from another node or after a restart (counting_since changed, or a
 * total went down) starts over instead of showing a nonsense rate.
 */
export interface Totals {
  enqueued: number;
  succeeded: number;
  failed: number;
  /** counting_since, epoch ms. */
  since: number;
}

export interface Rates {
  enqueued: number;
  succeeded: number;
  failed: number;
}

interface Sample {
  at: number;
  totals: Totals;
}

/** Rates per queue over a sliding window of reads (smooths one late poll). */
export class RateTracker {
  private readonly samples = new Map<string, Sample[]>();

  constructor(private readonly windowMs = 5_000) {}

  /** Records a read made at `at` (ms) and returns the rates, or undefined until two comparable reads exist. */
  add(queue: string, at: number, totals: Totals): Rates | undefined {
    let list = this.samples.get(queue) ?? [];
    const last = list[list.length - 1];
    if (
      last &&
      (last.totals.since !== totals.since ||
        totals.enqueued < last.totals.enqueued ||
        totals.succeeded < last.totals.succeeded ||
        totals.failed < last.totals.failed)
    )
      list = [];
    list.push({ at, totals });
    // Keep the newest read older than the window, so the window is always covered.
    while (list.length > 2 && list[1]!.at <= at - this.windowMs) list.shift();
    this.samples.set(queue, list);
    const first = list[0]!;
    const seconds = (at - first.at) / 1000;
    if (list.length < 2 || seconds <= 0) return undefined;
    return {
      enqueued: (totals.enqueued - first.totals.enqueued) / seconds,
      succeeded: (totals.succeeded - first.totals.succeeded) / seconds,
      failed: (totals.failed - first.totals.failed) / seconds,
    };
  }

  /** Forgets queues not in `names` (deleted). */
  retain(names: Set<string>): void {
    for (const name of this.samples.keys()) if (!names.has(name)) this.samples.delete(name);
  }
}
