/**
 * Partition leases on MySQL (table leases, on the partition's shard): who owns a partition
 * and under which epoch. The start, the one ownership write, is fenced by it under a shared
 * lock on the lease row (holdsLease; the fast start joins the row in its UPDATE), so a
 * takeover waits for the start to commit.
 */
import type { Lease } from "../store.js";
import type { MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { type Conn, run, select } from "./shard.js";
import { duplicateKeyIndex } from "./transient.js";

export async function leaseAcquire(
  ctx: MysqlContext,
  p: { queue: string; partition: number; owner: string; ttlMs: number; now: number },
): Promise<Lease | undefined> {
  const shard = await ctx.router.shardOf(p.queue, p.partition);
  for (let tries = 0; ; tries++) {
    try {
      return await shard.transaction(async (c) => {
        const [row] = await select<{ owner: string; epoch: number | string; expires_at: number | string }>(
          c,
          sql.LEASE_LOCK,
          [p.queue, p.partition],
        );
        if (row && row.owner !== "" && row.owner !== p.owner && Number(row.expires_at) > p.now) return undefined;
        // Same owner renews under its epoch; anyone else (or after a release) gets a higher one.
        const epoch = !row ? 1 : row.owner === p.owner ? Number(row.epoch) : Number(row.epoch) + 1;
        const lease: Lease = {
          queue: p.queue,
          partition: p.partition,
          owner: p.owner,
          epoch,
          expiresAt: p.now + p.ttlMs,
        };
        if (row) await run(c, sql.LEASE_UPDATE, [p.owner, epoch, lease.expiresAt, p.queue, p.partition]);
        else await run(c, sql.LEASE_INSERT, [p.queue, p.partition, p.owner, epoch, lease.expiresAt]);
        return lease;
      });
    } catch (err) {
      // Two brokers inserted the first lease row at once: the loser reads the winner's row.
      if (duplicateKeyIndex(err) === undefined || tries >= 2) throw err;
    }
  }
}

export async function leaseRelease(
  ctx: MysqlContext,
  p: { queue: string; partition: number; owner: string; epoch: number },
): Promise<void> {
  // The broker has released what it held; forget the partition's cursors with it.
  ctx.held.dropBelow(p.queue, p.partition, p.epoch + 1);
  await (await ctx.router.shardOf(p.queue, p.partition)).session((c) =>
    run(c, sql.LEASE_RELEASE, [p.queue, p.partition, p.owner, p.epoch]),
  );
}

/** Whether the lease is still at `epoch`, read under a shared lock held until the caller's transaction ends. */
export async function holdsLease(c: Conn, queue: string, partition: number, epoch: number): Promise<boolean> {
  const [row] = await select<{ epoch: number | string }>(c, sql.LEASE_EPOCH_SHARED, [queue, partition]);
  return row !== undefined && Number(row.epoch) === epoch;
}
