/**
 * Checks made when the shards are opened: eviction must be off (an evicted job key is a
 * lost job), and the --store list must extend the one the data was written with. Every
 * shard records its index in the list and shard 0 the number of shards, so:
 * - the first N URLs (N = the recorded count) must be the shards they were, in order;
 * - URLs beyond them are added shards: each must hold no key under the prefix, and gets
 *   its index recorded, and the count grows (nothing moves: placement is stored data);
 * - fewer URLs than recorded (a shard removed) is refused.
 * And shard 0 records the job layout the data is written in (JOB_LAYOUT): a prefix that
 * holds queues written in another layout is refused with a clear message, instead of
 * failing later on every job with WRONGTYPE.
 */
import type { Redis } from "ioredis";
import { redact } from "./cluster.js";
import type { Keys } from "./keys.js";

/** Connects, failing with the cause (ioredis alone reports "Connection is closed"). */
export async function connect(client: Redis, index: number, url: string): Promise<void> {
  let cause: Error | undefined;
  const onError = (err: Error) => (cause ??= err);
  client.on("error", onError);
  try {
    await client.connect();
  } catch (err) {
    throw new Error(`redis shard ${index} (${redact(url)}): cannot connect: ${(cause ?? (err as Error)).message}`);
  } finally {
    client.off("error", onError);
  }
}

/** Raises shard 0's recorded total to ARGV[1], never lowering it (two servers may open at once). */
const RAISE_TOTAL = `local v = tonumber(redis.call("GET", KEYS[1]) or "0")
if tonumber(ARGV[1]) > v then redis.call("SET", KEYS[1], ARGV[1]) end
return 1`;

/**
 * The layout of a job's keys (lua/include/job_record.lua). 1: a hash with a field per attribute
 * (before 2026-11-22, never released); 2: one string, packed attributes then the body;
 * 3 (2026-11-23): the same, the attributes reordered so the hot path's lie in one head;
 * 4: the flag of a workflow job's run marks two extra texts, its context and a traceparent.
 */
export const JOB_LAYOUT = 4;

/** Refuses a prefix whose data is in another layout (queues but no layout recorded: layout 1). */
async function checkLayout(shard0: Redis, keys: Keys): Promise<void> {
  const [recorded, queues] = await Promise.all([shard0.get(keys.layout()), shard0.hlen(keys.queues())]);
  const layout = recorded ?? (queues > 0 ? "1" : String(JOB_LAYOUT));
  if (layout !== String(JOB_LAYOUT)) {
    throw new Error(
      `prefix "${keys.prefix}" holds jobs in layout ${layout}, written by an earlier build; this build reads layout ${JOB_LAYOUT} and has no upgrade path from it (it was never released): delete the keys under "${keys.prefix}:" and create the queues again`,
    );
  }
}

/**
 * Checks and records the shard list and the job layout; returns the shard count of queues
 * without a stored placement. `holdsKeys` tells whether a shard without an index holds keys
 * under its prefix (by default a SCAN).
 */
export async function checkShards(
  clients: Redis[],
  keysOn: (shard: Redis) => Keys,
  requireNoEviction: boolean,
  holdsKeys: (client: Redis, prefix: string) => Promise<boolean> = hasKeys,
): Promise<number> {
  if (requireNoEviction) {
    await Promise.all(
      clients.map(async (client, index) => {
        const policy = await configGet(client, "maxmemory-policy");
        if (policy !== undefined && policy !== "noeviction") {
          throw new Error(
            `redis shard ${index}: maxmemory-policy is ${policy}; runlater needs noeviction (an evicted job is a lost job): CONFIG SET maxmemory-policy noeviction`,
          );
        }
      }),
    );
  }
  const shard0 = clients[0]!;
  const keys = keysOn(shard0);
  await checkLayout(shard0, keys); // before anything is recorded: a refused prefix stays as it was
  const [created, total] = await shard0.mget(keys.shardCount(), keys.shardTotal());
  // Shards the deployment has: 0 for a new one. A deployment from before shards could be
  // added records only the count it was created with.
  const known = Number(total ?? created ?? 0);
  if (clients.length < known) {
    throw new Error(
      `prefix "${keys.prefix}" has ${known} redis shards, but ${clients.length} --store URLs were given: shards cannot be removed (give every URL, in the original order, new ones last)`,
    );
  }
  const indexes = await Promise.all(clients.map((c) => c.get(keysOn(c).shardIndex())));
  for (const [i, recorded] of indexes.entries()) {
    if (recorded !== null && recorded !== String(i)) {
      throw new Error(
        `redis shard ${i} was shard ${recorded} for prefix "${keys.prefix}": give the --store URLs in their original order, new ones last`,
      );
    }
    if (recorded === null && i < known) {
      throw new Error(
        `redis shard ${i} does not know prefix "${keys.prefix}", which has ${known} shards: URL ${i} must be the shard it was (added shards go last)`,
      );
    }
  }
  await Promise.all(
    indexes.map(async (recorded, i) => {
      if (recorded !== null) return;
      // A shard being added must be empty: its keys would be someone else's data. Unless
      // another server opening the same list right now recorded the index since we read
      // it (a cluster's nodes start together): its first write is that index, so keys
      // found here come with it.
      const client = clients[i]!;
      const index = keysOn(client).shardIndex();
      if (await holdsKeys(client, keysOn(client).prefix)) {
        if ((await client.get(index)) === String(i)) return;
        throw new Error(
          `redis shard ${i} holds keys under prefix "${keys.prefix}" but no shard index: it is not a new shard; give the --store URLs in their original order, new ones last`,
        );
      }
      await client.set(index, String(i), "NX");
      const now = await client.get(index);
      if (now !== String(i))
        throw new Error(
          `redis shard ${i} was just recorded as shard ${now} by another server: give every server the same --store list`,
        );
    }),
  );
  await shard0.set(keys.layout(), String(JOB_LAYOUT), "NX");
  await shard0.set(keys.shardCount(), String(clients.length), "NX");
  await shard0.eval(RAISE_TOTAL, 1, keys.shardTotal(), String(clients.length));
  return Number(await shard0.get(keys.shardCount()));
}

/** Whether any key under `prefix` exists (a full SCAN, only for shards without an index, so at most once per shard). */
async function hasKeys(client: Redis, prefix: string): Promise<boolean> {
  let cursor = "0";
  do {
    const [next, found] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    if (found.length > 0) return true;
    cursor = next;
  } while (cursor !== "0");
  return false;
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
