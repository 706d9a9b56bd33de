/**
 * Redis Cluster stores for tests (redis+cluster://, the cluster of scripts/services.sh
 * redis-cluster): each gets a random key prefix, and `cleanupCluster()` closes them and
 * deletes their keys on every master.
 */
import { randomBytes } from "node:crypto";
import { Cluster } from "ioredis";
import { parseClusterUrl } from "../../src/store/redis/cluster.js";
import { openRedisStore, type RedisStore } from "../../src/store/redis/redis-store.js";
import { redisClusterUrl } from "../services.js";
import { keysOf } from "./redis-helpers.js";

const opened: Array<{ store: RedisStore; url: string; prefix: string }> = [];

/** A store on the test cluster; `options` is the URL's query (e.g. "shards=1", "wait=1"). */
export async function openClusterStore(options = "", url = redisClusterUrl()): Promise<RedisStore> {
  const prefix = `test:${randomBytes(6).toString("hex")}`;
  const store = await openRedisStore({ urls: [options ? `${url}?${options}` : url], prefix });
  opened.push({ store, url, prefix });
  return store;
}

/** A plain cluster client (test-only reads: slots, nodes, keys). */
export function clusterClient(url = redisClusterUrl()): Cluster {
  return new Cluster(parseClusterUrl(url).nodes);
}

/** Every key under `prefix` on the cluster: a SCAN on each master. */
export async function clusterKeys(cluster: Cluster, prefix: string): Promise<string[]> {
  const perNode = await Promise.all(
    cluster.nodes("master").map((node) => keysOf(`redis://${node.options.host}:${node.options.port}`, prefix)),
  );
  return perNode.flat();
}

export async function cleanupCluster(): Promise<void> {
  const stores = opened.splice(0);
  for (const { store } of stores) await store.close();
  const byUrl = new Map<string, string[]>();
  for (const { url, prefix } of stores) byUrl.set(url, [...(byUrl.get(url) ?? []), `${prefix}:`]);
  for (const [url, prefixes] of byUrl) {
    const cluster = clusterClient(url);
    try {
      await cluster.ping(); // the slot map: which nodes are masters
      // One SCAN per master for all of this file's prefixes, as redis-helpers.ts does.
      const keys = (await clusterKeys(cluster, "test")).filter((k) => prefixes.some((p) => k.startsWith(p)));
      // One key per UNLINK: a cluster refuses a multi-key command across slots.
      await Promise.all(keys.map((key) => cluster.unlink(key)));
    } finally {
      cluster.disconnect();
    }
  }
}
