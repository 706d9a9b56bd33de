/**
 * Checks made when a shard is opened: eviction must be off (an evicted job hash is a lost
 * job), and the --store list must be the one the data was written with, because the shard
 * map (keys.ts) depends on the count and order of shards.
 */
import type { Redis } from "ioredis";
import type { Keys } from "./keys.js";

/** A shard remembers its index, shard 0 the count: a changed --store list would move partitions. */
/** Connects, failing with the cause (ioredis alone reports "Connection is closed"). */
export async function connect(client: Redis, index: number, url: string): Promise<void> {
  let cause: Error | undefined;
  const onError = (err: Error) => (cause ??= err);
  client.on("error", onError);
  try {
    await client.connect();
  } catch (err) {
    const where = url.replace(/\/\/[^@/]*@/, "//"); // no password in messages
    throw new Error(`redis shard ${index} (${where}): cannot connect: ${(cause ?? (err as Error)).message}`);
  } finally {
    client.off("error", onError);
  }
}

export async function checkShard(client: Redis, keys: Keys, index: number, count: number, requireNoEviction: boolean): Promise<void> {
  if (requireNoEviction) {
    const policy = await configGet(client, "maxmemory-policy");
    if (policy !== undefined && policy !== "noeviction") {
      throw new Error(`redis shard ${index}: maxmemory-policy is ${policy}; runlater needs noeviction (an evicted job is a lost job): CONFIG SET maxmemory-policy noeviction`);
    }
  }
  await client.set(keys.shardIndex(), String(index), "NX");
  const recorded = await client.get(keys.shardIndex());
  if (recorded !== String(index)) throw new Error(`redis shard ${index} was shard ${recorded} for prefix "${keys.prefix}": give the --store URLs in their original order`);
  if (index === 0) {
    await client.set(keys.shardCount(), String(count), "NX");
    const shards = await client.get(keys.shardCount());
    if (shards !== String(count)) throw new Error(`prefix "${keys.prefix}" was created with ${shards} redis shards, not ${count}: the shard map depends on the count`);
  }
}

/** CONFIG may be disabled (managed Redis): then the policy cannot be checked here. */
async function configGet(client: Redis, name: string): Promise<string | undefined> {
  try {
    const reply = (await client.config("GET", name)) as string[];
    return reply[1];
  } catch {
    return undefined;
  }
}
