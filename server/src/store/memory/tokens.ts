/** API tokens in memory: records by id, handed out as copies. */
import type { TokenRecord } from "../../domain/tokens.js";
import type { MemoryState } from "./memory-state.js";

export async function tokenInsert(state: MemoryState, p: { token: TokenRecord }): Promise<boolean> {
  if (state.tokens.has(p.token.id)) return false;
  state.tokens.set(p.token.id, structuredClone(p.token));
  return true;
}

export async function tokenGet(state: MemoryState, p: { id: string }): Promise<TokenRecord | undefined> {
  const found = state.tokens.get(p.id);
  return found && structuredClone(found);
}

export async function tokenList(state: MemoryState): Promise<TokenRecord[]> {
  return [...state.tokens.values()].sort((a, b) => (a.id < b.id ? -1 : 1)).map((t) => structuredClone(t));
}

export async function tokenDelete(state: MemoryState, p: { id: string }): Promise<boolean> {
  return state.tokens.delete(p.id);
}
