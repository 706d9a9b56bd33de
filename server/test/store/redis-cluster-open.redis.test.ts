/**
 * Opening the Redis store on a Redis Cluster (redis+cluster://, store/redis/cluster.ts):
 * the URL form, clear refusals, the shards (hash tags) and where they land, growing them,
 * and WAIT's refusal when too few replicas confirm a write.
 */
import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { openStore } from "../../src/store/open-store.js";
import { keySlot, parseClusterUrl } from "../../src/store/redis/cluster.js";
import type { RedisContext } from "../../src/store/redis/redis-context.js";
import { openRedisStore, type RedisStore } from "../../src/store/redis/redis-store.js";
import { freePort, redisClusterUrl, redisUrl } from "../services.js";
import { insert } from "../storetest/fixtures.js";
import { cleanupCluster, clusterClient, openClusterStore } from "./redis-cluster-helpers.js";

afterAll(cleanupCluster);

const ctxOf = (store: RedisStore) => (store as unknown as { ctx: RedisContext }).ctx;

/** The slot of each shard's keys. */
function shardSlots(store: RedisStore): number[] {
  const ctx = ctxOf(store);
  return ctx.shards.map((shard) => keySlot(`${ctx.keysOn(shard).prefix}:x`));
}

describe("redis+cluster:// URLs", () => {
  it("name seed nodes, credentials and options", () => {
    expect(parseClusterUrl("redis+cluster://10.0.0.1:7000,[::1]:7001,node-3.local:7002")).toEqual({
      nodes: [
        { host: "10.0.0.1", port: 7000 },
        { host: "::1", port: 7001 },
        { host: "node-3.local", port: 7002 },
      ],
      tls: false,
      wait: 0,
      waitTimeoutMs: 1000,
    });
    expect(parseClusterUrl("rediss+cluster://app:s%40cret@h:6380/?shards=6&wait=1&waitTimeoutMs=250")).toMatchObject({
      nodes: [{ host: "h", port: 6380 }],
      tls: true,
      username: "app",
      password: "s@cret",
      shards: 6,
      wait: 1,
      waitTimeoutMs: 250,
    });
    // Each option at its upper bound is taken.
    expect(parseClusterUrl("redis+cluster://h:1?shards=1024&wait=16&waitTimeoutMs=60000")).toMatchObject({
      shards: 1024,
      wait: 16,
      waitTimeoutMs: 60_000,
    });
  });

  it("are refused with the reason, without the password", () => {
    const refusals: Array<[string, RegExp]> = [
      ["redis+cluster://", /expected redis\+cluster:\/\/\[user:password@\]host:port/],
      ["redis+cluster://h", /"h" is not host:port/],
      ["redis+cluster://h:0", /"h:0" is not host:port/],
      ["redis+cluster://h:1/db", /expected/],
      ["redis+cluster://h:1?shards=0", /shards=0 must be a whole number from 1 to 1024/],
      ["redis+cluster://h:1?shards=1025", /shards=1025 must be a whole number from 1 to 1024/],
      ["redis+cluster://h:1?wait=yes", /wait=yes must be a whole number from 0 to 16/],
      ["redis+cluster://h:1?wait=17", /wait=17 must be a whole number from 0 to 16/],
      ["redis+cluster://h:1?waitTimeoutMs=60001", /waitTimeoutMs=60001 must be a whole number from 1 to 60000/],
      ["redis+cluster://u:secret@h:1?timeout=5", /unknown option timeout/],
    ];
    for (const [url, reason] of refusals) {
      expect(() => parseClusterUrl(url), url).toThrow(reason);
      expect(() => parseClusterUrl(url)).not.toThrow(/secret/);
    }
  });
});

describe("opening a cluster store", () => {
  it("refuses a cluster that does not answer, a Redis that is no cluster, and two cluster URLs", async () => {
    const port = await freePort();
    await expect(openStore([`redis+cluster://127.0.0.1:${port}`])).rejects.toThrow(
      new RegExp(`redis cluster redis\\+cluster://127.0.0.1:${port}: cannot connect`),
    );
    const standalone = redisUrl().replace(/^redis:\/\/([^/]+).*$/, "redis+cluster://$1");
    await expect(openStore([standalone])).rejects.toThrow(/cannot connect: .*cluster support disabled/);
    await expect(openStore([redisClusterUrl(), redisClusterUrl()])).rejects.toThrow(/give one redis\+cluster:\/\/ URL/);
  });

  it("places one shard per master by default, so a queue's partitions spread over the masters", async () => {
    const store = await openClusterStore();
    const cluster = clusterClient();
    try {
      await cluster.ping();
      const masters = shardSlots(store).map((slot) => cluster.slots[slot]![0]);
      expect(new Set(masters).size).toBe(3);
      // A queue of three partitions: each on another shard, so on another master.
      await store.queueCreate({ name: "spread", config: resolveQueueConfig({ partitions: 3 }), now: 1 });
      const shards = await Promise.all([0, 1, 2].map((p) => ctxOf(store).router.shardOf("spread", p)));
      expect(new Set(shards).size).toBe(3);
      // Every key of a partition lives in its shard's slot (the script would fail otherwise; here, as stored).
      const [id] = await insert(store, "spread", [{ partition: 2 }]);
      const prefix = ctxOf(store).keysOn(shards[2]!).prefix;
      expect(await cluster.exists(`${prefix}:{q:spread:2}:j:${id}`)).toBe(1);
    } finally {
      cluster.disconnect();
    }
  });

  it("keeps a prefix's shards: ?shards=N appends, a lower N is refused, and no N reads the recorded ones", async () => {
    const first = await openClusterStore();
    const prefix = ctxOf(first).keys.prefix.replace(/:\{.*$/, "");
    const slots = shardSlots(first);
    await first.queueCreate({ name: "kept", config: resolveQueueConfig({}), now: 1 });
    const url = redisClusterUrl();
    const grown = await openRedisStore({ urls: [`${url}?shards=5`], prefix });
    expect(shardSlots(grown).slice(0, 3)).toEqual(slots);
    expect(shardSlots(grown)).toHaveLength(5);
    expect(await grown.queueGet({ name: "kept" })).toBeDefined();
    await grown.close();
    await expect(openRedisStore({ urls: [`${url}?shards=2`], prefix })).rejects.toThrow(
      /has 5 shards; \?shards=2 would drop some/,
    );
    const again = await openRedisStore({ urls: [url], prefix });
    expect(shardSlots(again)).toHaveLength(5);
    await again.close();
  });

  it("with ?wait=2 and one replica per master, refuses every write as unconfirmed", async () => {
    const store = await openClusterStore("wait=2&waitTimeoutMs=50");
    await expect(store.queueCreate({ name: "q", config: resolveQueueConfig({}), now: 1 })).rejects.toThrow(
      /a write reached 1 of 2 replicas within 50 ms \(WAIT\): it may be lost on a failover/,
    );
  });
});
