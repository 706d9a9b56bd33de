/**
 * Partition leases on SQLite: who owns a partition and under which epoch. Rows are never
 * deleted (a release sets owner = ''), so a partition's epoch only grows and a new owner's
 * is always higher; the claim and the start check it (hand-out.ts) in their transaction.
 */
import type { Lease } from "../store.js";
import type { SqliteContext } from "./context.js";

interface LeaseRow {
  owner: string;
  epoch: number;
  expires_at: number;
}

function leaseRow(ctx: SqliteContext, queue: string, partition: number): LeaseRow | undefined {
  return ctx.get<LeaseRow>(
    "SELECT owner, epoch, expires_at FROM leases WHERE queue = ? AND part = ?",
    queue,
    partition,
  );
}

export function leaseAcquire(
  ctx: SqliteContext,
  p: { queue: string; partition: number; owner: string; ttlMs: number; now: number },
): Lease | undefined {
  const row = leaseRow(ctx, p.queue, p.partition);
  const current = row && row.owner !== "" ? row : undefined;
  if (current && current.owner !== p.owner && current.expires_at > p.now) return undefined;
  const epoch = (row?.epoch ?? 0) + (current?.owner === p.owner ? 0 : 1);
  const expiresAt = p.now + p.ttlMs;
  ctx.run(
    "INSERT INTO leases (queue, part, owner, epoch, expires_at) VALUES (?, ?, ?, ?, ?) " +
      "ON CONFLICT DO UPDATE SET owner = excluded.owner, epoch = excluded.epoch, expires_at = excluded.expires_at",
    p.queue,
    p.partition,
    p.owner,
    epoch,
    expiresAt,
  );
  return { queue: p.queue, partition: p.partition, owner: p.owner, epoch, expiresAt };
}

export function leaseRelease(
  ctx: SqliteContext,
  p: { queue: string; partition: number; owner: string; epoch: number },
): void {
  ctx.run(
    "UPDATE leases SET owner = '', expires_at = 0 WHERE queue = ? AND part = ? AND owner = ? AND epoch = ?",
    p.queue,
    p.partition,
    p.owner,
    p.epoch,
  );
}
