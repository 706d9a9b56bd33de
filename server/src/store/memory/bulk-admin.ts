/**
 * Bulk admin in memory: retention GC (jobDeleteFinished, O(deleted) over each queue's
 * finished logs), DeleteJobs and RetryFailedJobs (over the queue's matching jobs). A
 * deleted job that had not ended, and a retried one with an ordering key, keep their key's
 * sequence whole (MemoryState.remove; a retry rejoins at the tail).
 */
import type { JobFilter } from "../../domain/job-filter.js";
import * as transitions from "../../domain/transitions.js";
import type { MemoryState } from "./memory-state.js";
import type { Slot } from "./queue-data.js";

export async function jobDeleteFinished(
  state: MemoryState,
  p: { queue: string; succeededBefore: number; failedBefore: number; limit: number },
): Promise<number> {
  const q = state.queues.get(p.queue);
  if (!q) return 0;
  let deleted = 0;
  for (const [which, before] of [
    ["succeeded", p.succeededBefore],
    ["failed", p.failedBefore],
  ] as const) {
    const log = q.finished[which];
    for (let entry = log.peek(); entry && entry.at < before && deleted < p.limit; entry = log.peek()) {
      log.shift();
      const slot = state.liveSlot(entry, which);
      if (slot) {
        state.remove(slot, 0); // finished: in no ordering sequence
        deleted++;
      }
    }
  }
  return deleted;
}

export async function jobDeleteMany(
  state: MemoryState,
  p: { queue: string; filter: JobFilter; limit: number; now: number },
): Promise<number> {
  const doomed: Slot[] = [];
  for await (const slot of state.matching(p.queue, p.filter, p.now)) {
    if (doomed.length >= p.limit) break;
    doomed.push(slot);
  }
  let deleted = 0;
  for (const slot of doomed) {
    if (!state.matchesNow(slot, p.filter, p.now)) continue;
    state.remove(slot, p.now);
    deleted++;
  }
  return deleted;
}

export async function jobRetryFailed(
  state: MemoryState,
  p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number },
): Promise<number> {
  const filter: JobFilter = { state: "failed", priority: p.priority };
  const found: Slot[] = [];
  for await (const slot of state.matching(p.queue, filter, p.now)) found.push(slot);
  const failed = found
    .filter((slot) => state.matchesNow(slot, filter, p.now))
    .sort((a, b) => a.job.finishedAt - b.job.finishedAt || a.job.seq - b.job.seq)
    .slice(0, p.limit);
  for (const slot of failed) {
    const key = slot.job.orderingKey;
    // Back into its key's sequence, at the tail: behind every job of the key that has not ended.
    const busy =
      key !== "" && state.queues.get(p.queue)!.partitions[slot.job.partition]!.sequences.join(key, slot, ++state.seq);
    state.apply(slot, transitions.retryFailed(p.attemptsAllowed, p.runAfter, p.now, busy));
  }
  return failed.length;
}
