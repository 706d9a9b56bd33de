/**
 * Durability: with appendonly yes and appendfsync always, nothing the store acknowledged
 * is lost when Redis dies without warning. This test runs its own redis-server (free
 * port, own temp dir), enqueues and acks through the store, SIGKILLs Redis, restarts it
 * on the same dir and reads everything back. It also checks the store refuses a server
 * that may evict keys.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { openRedisStore } from "../../src/store/redis/redis-store.js";
import { freePort, redisUrl } from "../services.js";
import { handOut, insert, T0 } from "../storetest/fixtures.js";

const dirs: string[] = [];
const servers: ChildProcess[] = [];

afterAll(() => {
  for (const server of servers) if (server.exitCode === null) server.kill("SIGKILL");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts redis-server in the foreground (so this process holds its pid) and waits for PING. */
async function startRedis(dir: string, port: number, extra: string[] = []): Promise<ChildProcess> {
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    ...extra,
  ];
  const server = spawn("redis-server", args, { stdio: "ignore" });
  servers.push(server);
  const probe = new Redis({
    port,
    host: "127.0.0.1",
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => undefined); // refused until the server listens
  for (let i = 0; i < 100; i++) {
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return server;
    } catch {
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`redis-server on port ${port} did not start`);
}

async function kill(server: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGKILL");
  await exited;
}

describe("redis store durability", () => {
  redisUrl(); // installs redis-server if this machine lacks it

  it("keeps every acknowledged enqueue and ack across a SIGKILL of Redis", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runlater-redis-"));
    dirs.push(dir);
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    let server = await startRedis(dir, port);

    let store = await openRedisStore({ urls: [url], prefix: "durable" });
    await store.queueCreate({ name: "durable", config: resolveQueueConfig({ partitions: 2 }), now: T0 });
    const ids: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const specs = Array.from({ length: 100 }, (_, i) => ({
        partition: i % 2,
        body: Buffer.from([batch, i, 0xff, 0]),
      }));
      ids.push(...(await insert(store, "durable", specs)));
    }
    const running = await handOut(store, "durable", { partition: 0, limit: 120 });
    const done = running.slice(0, 100);
    const acks = await store.jobCompleteMany({
      items: done.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "done" })),
      now: T0 + 1,
    });
    expect(acks.every((a) => a.outcome === "acknowledged")).toBe(true);

    await kill(server); // no SHUTDOWN, no save: only the AOF survives
    await store.close().catch(() => undefined);
    server = await startRedis(dir, port);
    store = await openRedisStore({ urls: [url], prefix: "durable" });

    const found = await store.jobGetMany({ ids });
    expect(found.filter((j) => j === undefined)).toHaveLength(0);
    expect(found.map((j) => Array.from(j!.body))).toEqual(ids.map((_, k) => [Math.floor(k / 100), k % 100, 0xff, 0]));
    const doneIds = new Set(done.map((j) => j.id));
    for (const job of found) {
      if (doneIds.has(job!.id))
        expect(job).toMatchObject({ state: "succeeded", customStatus: "done", finishedAt: T0 + 1 });
    }
    expect(await store.jobCount({ queue: "durable", filter: { state: "succeeded" }, now: T0 + 1 })).toBe(100);
    expect(await store.jobCount({ queue: "durable", filter: { state: "running" }, now: T0 + 1 })).toBe(20);
    expect(await store.jobCount({ queue: "durable", filter: { state: "pending" }, now: T0 + 1 })).toBe(380);
    // The claim sweep still finds the 20 running jobs after the restart.
    expect((await store.jobClaimExpire({ now: T0 + 1e9, limit: 100 })).expired).toHaveLength(20);
    await store.close();
    await kill(server);
  });

  it("refuses a Redis whose maxmemory-policy may evict jobs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runlater-redis-"));
    dirs.push(dir);
    const port = await freePort();
    const server = await startRedis(dir, port, ["--maxmemory-policy", "allkeys-lru"]);
    await expect(openRedisStore({ urls: [`redis://127.0.0.1:${port}`] })).rejects.toThrow(/noeviction/);
    await kill(server);
  });
});
