/**
 * Reads of jobs in memory: lookup by id, the dry-run peek (each partition's buffered jobs
 * and the best due pending ones, heaps left as they were), scan and count (over the
 * queue's jobs: admin calls, O(jobs in the queue)). Records go out as copies.
 */
import type { JobFilter, ScanCursor } from "../../domain/job-filter.js";
import { compareForDequeue, compareForScan, type JobRecord, withoutBody } from "../../domain/job-record.js";
import type { MemoryState } from "./memory-state.js";
import type { IndexEntry, Slot } from "./queue-data.js";

export async function jobCount(
  state: MemoryState,
  p: { queue: string; filter: JobFilter; now: number },
): Promise<number> {
  let count = 0;
  for await (const _ of state.matching(p.queue, p.filter, p.now)) count++;
  return count;
}

export async function jobGetMany(
  state: MemoryState,
  p: { ids: string[]; bodies?: boolean },
): Promise<Array<JobRecord | undefined>> {
  return p.ids.map((id) => {
    const slot = state.jobs.get(id);
    if (!slot) return undefined;
    return p.bodies === false ? withoutBody(slot.job) : { ...slot.job };
  });
}

export async function jobPeekMany(
  state: MemoryState,
  p: { queue: string; limit: number; now: number },
): Promise<JobRecord[]> {
  const q = state.queues.get(p.queue);
  if (!q) return [];
  const found: JobRecord[] = [];
  for (const index of q.partitions) {
    for (const id of index.buffered) found.push({ ...state.jobs.get(id)!.job });
    for (const heap of index.pending) {
      const taken: Array<[IndexEntry, Slot]> = [];
      while (taken.length < p.limit) {
        const top = state.cleanTop(heap);
        if (!top || top.at > p.now) break;
        heap.pop();
        taken.push([top, top.slot]);
      }
      for (const [entry, slot] of taken) {
        heap.push(entry);
        found.push({ ...slot.job });
      }
    }
  }
  return found.sort(compareForDequeue).slice(0, p.limit);
}

export async function jobScan(
  state: MemoryState,
  p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number },
): Promise<JobRecord[]> {
  const c = p.cursor;
  const page: JobRecord[] = [];
  for await (const slot of state.matching(p.queue, p.filter, p.now)) {
    const j = slot.job;
    if (c && (j.runAfter > c.runAfter || (j.runAfter === c.runAfter && j.id >= c.id))) continue;
    page.push(j);
  }
  page.sort(compareForScan);
  return page.slice(0, p.limit).map((j) => (p.bodies === false ? withoutBody(j) : { ...j }));
}
