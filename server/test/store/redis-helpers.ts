/**
 * Redis stores for tests: each gets a random key prefix (tests share one Redis and run in
 * parallel with other files), and `cleanup()` closes them and deletes their keys.
 * Several shards are several databases of the test Redis (/1, /2, ...).
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { openRedisStore, type RedisStore } from "../../src/store/redis/redis-store.js";
import { redisUrl } from "../services.js";

const opened: Array<{ store: RedisStore; urls: string[]; prefix: string }> = [];

export function shardUrls(shards: number): string[] {
  const base = redisUrl().replace(/\/\d*$/, "");
  return Array.from({ length: shards }, (_, i) => (shards === 1 ? base : `${base}/${i + 1}`));
}

export async function openTestStore(shards = 1): Promise<RedisStore> {
  const urls = shardUrls(shards);
  const prefix = `test:${randomBytes(6).toString("hex")}`;
  const store = await openRedisStore({ urls, prefix });
  opened.push({ store, urls, prefix });
  return store;
}

/** Every key under `prefix` on `url` (SCAN, test-only). */
export async function keysOf(url: string, prefix: string): Promise<string[]> {
  const client = new Redis(url);
  try {
    const found: string[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== "0");
    return found;
  } finally {
    client.disconnect();
  }
}

export async function cleanup(): Promise<void> {
  const stores = opened.splice(0);
  for (const { store } of stores) await store.close();
  // One SCAN per database for all of this file's prefixes (not one per store: a shared
  // Redis may hold many other keys).
  const prefixesByUrl = new Map<string, string[]>();
  for (const { urls, prefix } of stores)
    for (const url of urls) prefixesByUrl.set(url, [...(prefixesByUrl.get(url) ?? []), `${prefix}:`]);
  for (const [url, prefixes] of prefixesByUrl) {
    const keys = (await keysOf(url, "test")).filter((k) => prefixes.some((p) => k.startsWith(p)));
    const client = new Redis(url);
    for (let i = 0; i < keys.length; i += 500) await client.unlink(...keys.slice(i, i + 500));
    client.disconnect();
  }
}
