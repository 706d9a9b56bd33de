/**
 * Partition leases on Redis (lease_acquire.lua, lease_release.lua): who owns a partition
 * and under which epoch. Epochs come from one counter per shard, so they only grow; the
 * scripts that claim and start check the epoch themselves.
 */
import type { Lease } from "../store.js";
import { text } from "./codec.js";
import { type RedisContext, runOnPartition } from "./redis-context.js";

export async function leaseAcquire(
  ctx: RedisContext,
  p: { queue: string; partition: number; owner: string; ttlMs: number; now: number },
): Promise<Lease | undefined> {
  const reply = (await runOnPartition(
    ctx,
    p.queue,
    p.partition,
    "lease_acquire",
    (on) => [on.lease(p.queue, p.partition), on.marker(p.queue, p.partition), on.epochs()],
    [p.owner, p.ttlMs, p.now],
  )) as [number, Buffer] | null;
  if (!reply) return undefined;
  return { queue: p.queue, partition: p.partition, owner: p.owner, epoch: reply[0], expiresAt: Number(text(reply[1])) };
}

export async function leaseRelease(
  ctx: RedisContext,
  p: { queue: string; partition: number; owner: string; epoch: number },
): Promise<void> {
  await runOnPartition(ctx, p.queue, p.partition, "lease_release", (on) => [on.lease(p.queue, p.partition)], [
    p.owner,
    p.epoch,
  ]);
}
