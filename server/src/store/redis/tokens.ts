/** API tokens on Redis: one hash on shard 0, token id → JSON record (a secret only as its hash). */
import type { TokenRecord } from "../../domain/tokens.js";
import type { RedisContext } from "./redis-context.js";

export async function tokenInsert(ctx: RedisContext, p: { token: TokenRecord }): Promise<boolean> {
  return (await ctx.shards[0]!.hsetnx(ctx.keys.tokens(), p.token.id, JSON.stringify(p.token))) === 1;
}

export async function tokenGet(ctx: RedisContext, p: { id: string }): Promise<TokenRecord | undefined> {
  const found = await ctx.shards[0]!.hget(ctx.keys.tokens(), p.id);
  return found === null ? undefined : (JSON.parse(found) as TokenRecord);
}

export async function tokenList(ctx: RedisContext): Promise<TokenRecord[]> {
  const all = await ctx.shards[0]!.hgetall(ctx.keys.tokens());
  return Object.values(all)
    .map((v) => JSON.parse(v) as TokenRecord)
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

export async function tokenDelete(ctx: RedisContext, p: { id: string }): Promise<boolean> {
  return (await ctx.shards[0]!.hdel(ctx.keys.tokens(), p.id)) === 1;
}
