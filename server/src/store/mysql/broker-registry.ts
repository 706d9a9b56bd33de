/**
 * The broker registry on MySQL: who is alive and where (table brokers, on shard 0), so
 * every server sees the same list of brokers to assign partitions to.
 */
import type { BrokerEntry } from "../store.js";
import type { MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { run, select } from "./shard.js";

export async function brokerHeartbeat(
  ctx: MysqlContext,
  p: { id: string; url: string; ttlMs: number; now: number },
): Promise<void> {
  await ctx.shards[0]!.session((c) => run(c, sql.BROKER_UPSERT, [p.id, p.url, p.now + p.ttlMs]));
}

export async function brokerList(ctx: MysqlContext, p: { now: number }): Promise<BrokerEntry[]> {
  return ctx.shards[0]!.session(async (c) => {
    if (Math.random() < 0.01) await run(c, sql.BROKER_PURGE_DEAD, [p.now - 60 * 60_000]);
    const rows = await select<{ id: string; url: string; expires_at: number | string }>(c, sql.BROKER_LIVE, [p.now]);
    return rows.map((r) => ({ id: r.id, url: r.url, expiresAt: Number(r.expires_at) }));
  });
}

export async function brokerLeave(ctx: MysqlContext, p: { id: string }): Promise<void> {
  await ctx.shards[0]!.session((c) => run(c, sql.BROKER_DELETE, [p.id]));
}
