/**
 * The broker registry on Redis: who is alive and where, one hash on shard 0 (broker id →
 * JSON {url, expiresAt}), so every server sees the same list of brokers to assign
 * partitions to.
 */
import type { BrokerEntry } from "../store.js";
import type { RedisContext } from "./redis-context.js";

/** Expired registrations are kept this long (for debugging) before brokerList drops them. */
const REGISTRY_KEEP_DEAD_MS = 60 * 60_000;

export async function brokerHeartbeat(
  ctx: RedisContext,
  p: { id: string; url: string; ttlMs: number; now: number },
): Promise<void> {
  await ctx.shards[0]!.hset(ctx.keys.brokers(), p.id, JSON.stringify({ url: p.url, expiresAt: p.now + p.ttlMs }));
}

export async function brokerList(ctx: RedisContext, p: { now: number }): Promise<BrokerEntry[]> {
  const all = await ctx.shards[0]!.hgetall(ctx.keys.brokers());
  const live: BrokerEntry[] = [];
  const dead: string[] = [];
  for (const [id, value] of Object.entries(all)) {
    const { url, expiresAt } = JSON.parse(value) as { url: string; expiresAt: number };
    if (expiresAt > p.now) live.push({ id, url, expiresAt });
    else if (expiresAt < p.now - REGISTRY_KEEP_DEAD_MS) dead.push(id);
  }
  // Long-dead entries are dropped here so the hash stays as small as the cluster.
  if (dead.length > 0) await ctx.shards[0]!.hdel(ctx.keys.brokers(), ...dead);
  return live.sort((a, b) => (a.id < b.id ? -1 : 1));
}

export async function brokerLeave(ctx: RedisContext, p: { id: string }): Promise<void> {
  await ctx.shards[0]!.hdel(ctx.keys.brokers(), p.id);
}
