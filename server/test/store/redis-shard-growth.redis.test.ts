import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { openRedisStore } from "../../src/store/redis/redis-store.js";
import { keysOf, shardUrls } from "./redis-helpers.js";
import { shardGrowthTests } from "./shard-growth.js";

// Four databases of the test Redis; each test its own key prefix (a deployment of its own).
const urls = shardUrls(4);
const prefixes: string[] = [];

async function onShard<T>(url: string, work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url);
  try {
    return await work(client);
  } finally {
    client.disconnect();
  }
}

describe("redis store: adding shards", () => {
  shardGrowthTests(() => {
    const prefix = `test:${randomBytes(6).toString("hex")}`;
    prefixes.push(prefix);
    return {
      open: (shards) => openRedisStore({ urls: shards.map((i) => urls[i]!), prefix }),
      placement: async (queue) =>
        (await onShard(urls[0]!, (c) => c.hget(`${prefix}:{meta}:placement`, queue))) ?? undefined,
      dropPlacement: async (queue) =>
        void (await onShard(urls[0]!, (c) => c.hdel(`${prefix}:{meta}:placement`, queue))),
      holdsJobs: async (shard, queue, partition) =>
        (await keysOf(urls[shard]!, prefix)).some((k) => k.startsWith(`${prefix}:{q:${queue}:${partition}}:j:`)),
      pollute: async (shard) => void (await onShard(urls[shard]!, (c) => c.set(`${prefix}:{q:stray:0}:q`, "1"))),
    };
  });
});

afterAll(async () => {
  for (const url of urls) {
    const keys = (await Promise.all(prefixes.map((p) => keysOf(url, p)))).flat();
    if (keys.length > 0) await onShard(url, (c) => c.unlink(...keys));
  }
});

describe("redis store: servers opening a new deployment at once", () => {
  it("all open: one records the shard indexes, the others see them (no 'not a new shard' refusal)", async () => {
    const prefix = `test:${randomBytes(6).toString("hex")}`;
    prefixes.push(prefix);
    // A cluster's nodes start together: each reads the shard indexes (none yet), then checks
    // the shards are empty while another may already have recorded its index.
    const opened = await Promise.allSettled(
      Array.from({ length: 12 }, () => openRedisStore({ urls: [urls[0]!, urls[1]!], prefix })),
    );
    const refused = opened
      .filter((o) => o.status === "rejected")
      .map((o) => String((o as PromiseRejectedResult).reason));
    await Promise.all(opened.map((o) => (o.status === "fulfilled" ? o.value.close() : undefined)));
    expect(refused).toEqual([]);
  });
});
