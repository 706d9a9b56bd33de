/**
 * Partition leases in memory: who owns a partition and under which epoch. A partition's
 * epoch is remembered after its lease is released, so a new owner's is always higher;
 * the claim and the start check it (holdsLease).
 */
import type { Lease } from "../store.js";
import type { MemoryState } from "./memory-state.js";

export async function leaseAcquire(
  state: MemoryState,
  p: { queue: string; partition: number; owner: string; ttlMs: number; now: number },
): Promise<Lease | undefined> {
  const key = `${p.queue}/${p.partition}`;
  const current = state.leases.get(key);
  if (current && current.owner !== p.owner && current.expiresAt > p.now) return undefined;
  let epoch = current?.epoch ?? state.epochs.get(key) ?? 0;
  if (!current || current.owner !== p.owner) epoch += 1;
  state.epochs.set(key, epoch);
  const lease: Lease = { queue: p.queue, partition: p.partition, owner: p.owner, epoch, expiresAt: p.now + p.ttlMs };
  state.leases.set(key, lease);
  return { ...lease };
}

export async function leaseRelease(
  state: MemoryState,
  p: { queue: string; partition: number; owner: string; epoch: number },
): Promise<void> {
  const key = `${p.queue}/${p.partition}`;
  const current = state.leases.get(key);
  if (current && current.owner === p.owner && current.epoch === p.epoch) state.leases.delete(key);
}

export function holdsLease(state: MemoryState, queue: string, partition: number, epoch: number): boolean {
  return state.leases.get(`${queue}/${partition}`)?.epoch === epoch;
}
