/** API tokens on MySQL: table api_tokens on shard 0, the record as JSON (a secret only as its hash). */
import type { TokenRecord } from "../../domain/tokens.js";
import type { MysqlContext } from "./mysql-context.js";
import { run, select } from "./shard.js";

export async function tokenInsert(ctx: MysqlContext, p: { token: TokenRecord }): Promise<boolean> {
  const inserted = await ctx.shards[0]!.session((c) =>
    run(c, "INSERT IGNORE INTO api_tokens (id, record) VALUES (?, ?)", [p.token.id, JSON.stringify(p.token)]),
  );
  return inserted === 1;
}

export async function tokenGet(ctx: MysqlContext, p: { id: string }): Promise<TokenRecord | undefined> {
  const [row] = await ctx.shards[0]!.session((c) =>
    select<{ record: string }>(c, "SELECT record FROM api_tokens WHERE id = ?", [p.id]),
  );
  return row ? (JSON.parse(row.record) as TokenRecord) : undefined;
}

export async function tokenList(ctx: MysqlContext): Promise<TokenRecord[]> {
  const rows = await ctx.shards[0]!.session((c) =>
    select<{ record: string }>(c, "SELECT record FROM api_tokens ORDER BY id"),
  );
  return rows.map((r) => JSON.parse(r.record) as TokenRecord);
}

export async function tokenDelete(ctx: MysqlContext, p: { id: string }): Promise<boolean> {
  return (await ctx.shards[0]!.session((c) => run(c, "DELETE FROM api_tokens WHERE id = ?", [p.id]))) === 1;
}
