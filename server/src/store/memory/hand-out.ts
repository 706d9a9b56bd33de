/**
 * The broker's path in memory, from a partition's due jobs to running ones: the claim
 * (pending to buffered, best first, under the lease epoch), the next-due lookup, the
 * release of buffered jobs, and the start (buffered to running per its plan).
 */
import { byteBudget } from "../../domain/byte-budget.js";
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import { holdsLease } from "./leases.js";
import type { MemoryState } from "./memory-state.js";

export async function jobClaimMany(
  state: MemoryState,
  p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number },
): Promise<JobRecord[]> {
  const q = state.queues.get(p.queue);
  const index = q?.partitions[p.partition];
  if (!q || !index || !holdsLease(state, p.queue, p.partition, p.epoch)) return [];
  const claimed: JobRecord[] = [];
  const fits = byteBudget(p.maxBytes);
  let full = false;
  for (const heap of index.pending) {
    while (claimed.length < p.limit) {
      const slot = state.dueTop(heap, p.now);
      if (!slot) break;
      if (!fits(slot.job.body.length)) {
        full = true;
        break;
      }
      heap.pop();
      state.apply(slot, transitions.claimIntoBuffer(p.epoch));
      claimed.push({ ...slot.job });
    }
    if (full || claimed.length >= p.limit) break;
  }
  return claimed;
}

export async function jobNextDueAt(
  state: MemoryState,
  p: { queue: string; partition: number },
): Promise<number | undefined> {
  const index = state.queues.get(p.queue)?.partitions[p.partition];
  let next: number | undefined;
  for (const heap of index?.pending ?? []) {
    const top = state.cleanTop(heap);
    if (top && (next === undefined || top.at < next)) next = top.at;
  }
  return next;
}

export async function jobReleaseBuffered(
  state: MemoryState,
  p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number },
): Promise<number> {
  const index = state.queues.get(p.queue)?.partitions[p.partition];
  if (!index) return 0;
  const candidates = p.ids ?? [...index.buffered];
  let released = 0;
  for (const id of candidates) {
    const slot = state.jobs.get(id);
    if (slot?.job.state !== "buffered") continue;
    const mine = p.ids !== undefined && slot.job.bufferEpoch === p.epoch;
    const stale = p.belowEpoch !== undefined && slot.job.bufferEpoch < p.belowEpoch;
    if (!mine && !stale) continue;
    state.apply(slot, transitions.unbuffer());
    released++;
  }
  return released;
}

export async function jobStartMany(
  state: MemoryState,
  p: { queue: string; partition: number; epoch: number; plans: transitions.HandOutPlan[]; now: number },
): Promise<string[]> {
  if (!holdsLease(state, p.queue, p.partition, p.epoch)) return [];
  const started: string[] = [];
  for (const plan of p.plans) {
    const slot = state.jobs.get(plan.id);
    if (slot?.job.state !== "buffered" || slot.job.bufferEpoch !== p.epoch) continue;
    state.apply(slot, transitions.handOut(slot.job, plan, p.now));
    started.push(plan.id);
  }
  return started;
}
