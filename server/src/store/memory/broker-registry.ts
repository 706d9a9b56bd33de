/** The broker registry in memory: who is alive and where (one process, so only its own brokers). */
import type { BrokerEntry } from "../store.js";
import type { MemoryState } from "./memory-state.js";

export async function brokerHeartbeat(
  state: MemoryState,
  p: { id: string; url: string; ttlMs: number; now: number },
): Promise<void> {
  state.brokers.set(p.id, { id: p.id, url: p.url, expiresAt: p.now + p.ttlMs });
}

export async function brokerList(state: MemoryState, p: { now: number }): Promise<BrokerEntry[]> {
  for (const [id, b] of state.brokers) if (b.expiresAt <= p.now) state.brokers.delete(id);
  return [...state.brokers.values()].map((b) => ({ ...b })).sort((a, b) => (a.id < b.id ? -1 : 1));
}

export async function brokerLeave(state: MemoryState, p: { id: string }): Promise<void> {
  state.brokers.delete(p.id);
}
