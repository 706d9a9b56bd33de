/** The broker registry on SQLite: who is alive and where (one process owns the file, so only its own brokers). */
import type { BrokerEntry } from "../store.js";
import type { SqliteContext } from "./context.js";

export function brokerHeartbeat(ctx: SqliteContext, p: { id: string; url: string; ttlMs: number; now: number }): void {
  ctx.run(
    "INSERT INTO brokers (id, url, expires_at) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET url = excluded.url, expires_at = excluded.expires_at",
    p.id,
    p.url,
    p.now + p.ttlMs,
  );
}

export function brokerList(ctx: SqliteContext, p: { now: number }): BrokerEntry[] {
  ctx.run("DELETE FROM brokers WHERE expires_at <= ?", p.now);
  return ctx
    .all<{ id: string; url: string; expires_at: number }>("SELECT id, url, expires_at FROM brokers ORDER BY id")
    .map((b) => ({ id: b.id, url: b.url, expiresAt: b.expires_at }));
}

export function brokerLeave(ctx: SqliteContext, p: { id: string }): void {
  ctx.run("DELETE FROM brokers WHERE id = ?", p.id);
}
