/** API tokens on SQLite: one row per token id, the record as JSON (a secret only as its hash). */
import type { TokenRecord } from "../../domain/tokens.js";
import type { SqliteContext } from "./context.js";

export function tokenInsert(ctx: SqliteContext, p: { token: TokenRecord }): boolean {
  return (
    ctx.run(
      "INSERT INTO tokens (id, record) VALUES (?, ?) ON CONFLICT DO NOTHING",
      p.token.id,
      JSON.stringify(p.token),
    ) === 1
  );
}

export function tokenGet(ctx: SqliteContext, p: { id: string }): TokenRecord | undefined {
  const row = ctx.get<{ record: string }>("SELECT record FROM tokens WHERE id = ?", p.id);
  return row === undefined ? undefined : (JSON.parse(row.record) as TokenRecord);
}

export function tokenList(ctx: SqliteContext): TokenRecord[] {
  return ctx
    .all<{ record: string }>("SELECT record FROM tokens ORDER BY id")
    .map((r) => JSON.parse(r.record) as TokenRecord);
}

export function tokenDelete(ctx: SqliteContext, p: { id: string }): boolean {
  return ctx.run("DELETE FROM tokens WHERE id = ?", p.id) === 1;
}
