/**
 * Queues in memory: their records and data (queue-data.ts), created, read, grown and
 * deleted with every job and lease they have. Records go out as copies, so no caller can
 * change a stored config in place.
 */
import { queueNotFound } from "../../domain/errors.js";
import type { QueueRecord, QueueStatsRecord } from "../store.js";
import type { MemoryState } from "./memory-state.js";
import { PartitionIndex, QueueData } from "./queue-data.js";

export async function queueCreate(
  state: MemoryState,
  p: { name: string; config: QueueRecord["config"]; now: number },
): Promise<{ queue: QueueRecord; created: boolean }> {
  const existing = state.queues.get(p.name);
  if (existing) return { queue: cloneQueue(existing.record), created: false };
  const record: QueueRecord = { name: p.name, config: p.config, createdAt: p.now };
  state.queues.set(p.name, new QueueData(record));
  return { queue: cloneQueue(record), created: true };
}

export async function queueDelete(state: MemoryState, p: { name: string }): Promise<boolean> {
  const q = state.queues.get(p.name);
  if (!q) return false;
  for (const id of q.jobs) {
    const slot = state.jobs.get(id)!;
    slot.gen++; // index entries (the global running index too) now see it as gone
    state.jobs.delete(id);
  }
  state.queues.delete(p.name);
  for (const key of [...state.leases.keys()]) if (key.startsWith(`${p.name}/`)) state.leases.delete(key);
  return true;
}

export async function queueGet(state: MemoryState, p: { name: string }): Promise<QueueRecord | undefined> {
  const q = state.queues.get(p.name);
  return q ? cloneQueue(q.record) : undefined;
}

export async function queueList(state: MemoryState): Promise<QueueRecord[]> {
  return [...state.queues.values()].map((q) => cloneQueue(q.record)).sort((a, b) => (a.name < b.name ? -1 : 1));
}

export async function queueStats(state: MemoryState, p: { name: string; now: number }): Promise<QueueStatsRecord> {
  const q = state.queues.get(p.name);
  if (!q) throw queueNotFound(p.name);
  let scheduled = 0;
  let oldestDue: number | undefined;
  for (const index of q.partitions) {
    for (const id of index.buffered) oldestDue = Math.min(oldestDue ?? Infinity, state.jobs.get(id)!.job.runAfter);
    for (const id of index.waiting) {
      const runAfter = state.jobs.get(id)!.job.runAfter;
      if (runAfter > p.now) scheduled++;
      else oldestDue = Math.min(oldestDue ?? Infinity, runAfter);
    }
    for (const heap of index.pending) {
      for (const entry of heap.values()) {
        const slot = state.liveSlot(entry, "pending");
        if (!slot) continue;
        if (entry.at > p.now) scheduled++;
        else oldestDue = Math.min(oldestDue ?? Infinity, entry.at);
      }
    }
  }
  return {
    pending: q.counts.pending + q.counts.waiting + q.counts.buffered,
    scheduled,
    running: q.counts.running,
    succeeded: q.counts.succeeded,
    failed: q.counts.failed,
    oldestPendingAgeMs: oldestDue === undefined ? 0 : Math.max(0, p.now - oldestDue),
  };
}

export async function queueUpdate(
  state: MemoryState,
  p: { name: string; config: QueueRecord["config"] },
): Promise<QueueRecord | undefined> {
  const q = state.queues.get(p.name);
  if (!q) return undefined;
  q.record = { ...q.record, config: p.config };
  // Partitions only grow (the engine refuses fewer): new ones start empty.
  while (q.partitions.length < p.config.partitions) q.partitions.push(new PartitionIndex());
  return cloneQueue(q.record);
}

function cloneQueue(record: QueueRecord): QueueRecord {
  return { ...record, config: { ...record.config, retryPolicy: { ...record.config.retryPolicy } } };
}
