/**
 * Several nodes in one process sharing one Redis: forwarding, notifications across
 * nodes, rebalancing. (Real processes, SIGKILL and SIGSTOP: test/cluster/.)
 */
import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { createRunlaterClient, ErrorReason, errorReason, RetryAfter, type RunlaterClient, Worker } from "@runlater/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { type Role, type RunningServer, startServer } from "../../src/server.js";
import { openRedisStore } from "../../src/store/redis/redis-store.js";
import { redisUrl } from "../services.js";

const running: RunningServer[] = [];
const clients: RunlaterClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

function cluster() {
  const prefix = `test:${randomBytes(6).toString("hex")}`;
  return async (role: Role = "all") => {
    const store = await openRedisStore({ urls: [redisUrl()], prefix });
    const server = await startServer({ store, role, port: 0, leaseTtlMs: 600, sweepIntervalMs: 50 });
    running.push(server);
    const client = createRunlaterClient(server.url);
    clients.push(client);
    return { server, client };
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Dequeues and acks through `client` until `count` jobs were handed out; returns their ids in order. */
async function drain(client: RunlaterClient, queue: string, count: number, seen: string[] = []): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  while (seen.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${seen.length} of ${count} jobs handed out`);
    const { jobs } = await client.worker.dequeue({ queue, limit: 50, wait: { seconds: 1n, nanos: 0 } });
    if (jobs.length === 0) continue;
    seen.push(...jobs.map((j) => j.jobId));
    await client.worker.ack({ queue, succeeded: jobs.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken })) });
  }
  return seen;
}

const bodies = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ queue: "", body: new TextEncoder().encode(`job ${i}`) }));

describe("cluster on one Redis", () => {
  it("hands out every job through any node while the partitions are owned by several brokers", async () => {
    const start = cluster();
    const nodes = [await start(), await start(), await start()];
    const [a, b] = nodes;
    await until(
      () => nodes.every((n) => n.server.membership.brokers().length === 3),
      "three brokers to see each other",
    );
    await a!.client.createQueue("spread", { partitions: 6 });
    const ids = await a!.client.enqueueMany(bodies(300).map((j) => ({ ...j, queue: "spread" })));
    const seen = await drain(b!.client, "spread", 300);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toHaveLength(300); // nobody got a job twice
    // More than one broker claimed from the store: the partitions really were spread.
    expect(nodes.filter((n) => n.server.broker!.claimStats.queries > 0).length).toBeGreaterThan(1);
    const { count } = await a!.client.jobs.countJobs({ queue: "spread", state: 3 /* SUCCEEDED */ });
    expect(count).toBe(300n);
  });

  it("wakes a long poll waiting on a frontend when a job is enqueued on another node", async () => {
    const start = cluster();
    const broker = await start("broker");
    const frontend = await start("frontend");
    const other = await start("frontend");
    await until(
      () => frontend.server.membership.brokers().length === 1 && other.server.membership.brokers().length === 1,
      "frontends to see the broker",
    );
    await frontend.client.createQueue("wake", { partitions: 2 });
    const polling = frontend.client.worker.dequeue({ queue: "wake", limit: 10, wait: { seconds: 10n, nanos: 0 } });
    await new Promise((r) => setTimeout(r, 100));
    const [id] = await other.client.enqueueMany([{ queue: "wake", body: new Uint8Array([1]) }]);
    const { jobs } = await polling;
    expect(jobs.map((j) => j.jobId)).toEqual([id]);
    expect(broker.server.broker!.claimStats.queries).toBeGreaterThan(0);
  });

  it("accepts enqueues while no broker is alive, refuses Dequeue with NO_BROKER, and serves once one starts", async () => {
    const start = cluster();
    const frontend = await start("frontend");
    await frontend.client.createQueue("nobroker", { partitions: 3 });
    const ids = await frontend.client.enqueueMany(bodies(20).map((j) => ({ ...j, queue: "nobroker" })));
    expect(ids).toHaveLength(20);
    const refused = await frontend.client.worker.dequeue({ queue: "nobroker", limit: 5 }).catch((e: unknown) => e);
    expect(ConnectError.from(refused).code).toBe(Code.Unavailable);
    expect(errorReason(refused)).toBe(ErrorReason.NO_BROKER);
    expect(ConnectError.from(refused).rawMessage).toMatch(/enqueues still work/);
    await start("broker");
    await until(() => frontend.server.membership.brokers().length === 1, "the frontend to see the new broker");
    expect(new Set(await drain(frontend.client, "nobroker", 20))).toEqual(new Set(ids));
  });

  it("moves partitions when brokers join and leave, losing and repeating no job", async () => {
    const start = cluster();
    const a = await start();
    const b = await start();
    await until(() => a.server.membership.brokers().length === 2, "two brokers");
    await a.client.createQueue("moving", { partitions: 8 });
    const ids = await a.client.enqueueMany(bodies(400).map((j) => ({ ...j, queue: "moving" })));
    const seen = await drain(a.client, "moving", 100);
    const c = await start();
    await until(
      () => a.server.membership.brokers().length === 3 && b.server.membership.brokers().length === 3,
      "the third broker to be seen",
    );
    await drain(c.client, "moving", 250, seen);
    await b.server.stop(); // graceful: leaves the registry and releases its partitions at once
    running.splice(running.indexOf(b.server), 1);
    await until(() => a.server.membership.brokers().length === 2, "the leaving broker to be gone");
    await drain(a.client, "moving", 400, seen);
    expect(seen).toHaveLength(400);
    expect(new Set(seen)).toEqual(new Set(ids));
  });

  it("answers a forwarded Dequeue at once on a broker that owns none of the queue's partitions", async () => {
    const start = cluster();
    const a = await start();
    const b = await start();
    await until(
      () => a.server.membership.brokers().length === 2 && b.server.membership.brokers().length === 2,
      "two brokers",
    );
    await a.client.createQueue("single", { partitions: 1 });
    const owner = a.server.membership.ownerOf("single", 0, 1)!.id;
    const other = [a, b].find((n) => n.server.membership.selfId !== owner)!;
    await other.client.enqueueMany([{ queue: "single", body: new Uint8Array([1]) }]);
    const began = Date.now();
    const { jobs } = await other.client.worker.dequeue(
      { queue: "single", limit: 1, wait: { seconds: 5n, nanos: 0 } },
      { headers: { "runlater-forwarded": "1" } },
    );
    expect(jobs).toEqual([]); // the job is there, but on the other broker's partition
    expect(Date.now() - began).toBeLessThan(2000); // not held for the 5 s wait
    // Without the header the same node forwards to the owner and gets the job.
    expect(
      (await other.client.worker.dequeue({ queue: "single", limit: 1, wait: { seconds: 5n, nanos: 0 } })).jobs,
    ).toHaveLength(1);
  });

  it.each(["poll", "stream"] as const)(
    "runs the SDK Worker (%s mode) through a frontend: retries, ordering keys and acks all cross the forwarding",
    async (mode) => {
      const start = cluster();
      await start("broker");
      await start("broker");
      const frontend = await start("frontend");
      await until(() => frontend.server.membership.brokers().length === 2, "the frontend to see both brokers");
      await frontend.client.createQueue("sdk", { partitions: 4 });
      const keyed = await frontend.client.enqueueMany(
        Array.from({ length: 5 }, (_, i) => ({ queue: "sdk", body: `k${i}`, orderingKey: "one-key" })),
      );
      const plain = await frontend.client.enqueueMany(
        Array.from({ length: 40 }, (_, i) => ({ queue: "sdk", body: `p${i}` })),
      );
      const done: string[] = [];
      let keyedRunning = 0;
      let keyedOverlap = false;
      // A stream's hand-outs are forwarded like Dequeue calls (engine.dequeue on the frontend).
      const workerClient =
        mode === "stream" ? createRunlaterClient(frontend.server.url, { httpVersion: "2" }) : frontend.client;
      if (mode === "stream") clients.push(workerClient);
      const worker = new Worker({
        client: workerClient,
        dequeueMode: mode,
        queue: "sdk",
        concurrency: 8,
        pollWaitMs: 500,
        onError: () => {},
        handler: async (job) => {
          const body = job.text();
          if (body.startsWith("k")) {
            keyedOverlap ||= keyedRunning > 0;
            keyedRunning++;
            await new Promise((r) => setTimeout(r, 5));
            keyedRunning--;
          }
          // Every third plain job fails once and comes back 20 ms later, through another broker maybe.
          if (body.startsWith("p") && Number(body.slice(1)) % 3 === 0 && job.attempt === 1) throw new RetryAfter(20);
          done.push(body);
          if (done.length === 45) void worker.stop();
          return "ok";
        },
      });
      // On a hang, say which jobs never finished and where they are (seen once in CI).
      let deadline: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        deadline = setTimeout(async () => {
          const { jobs } = await frontend.client.jobs
            .getJobs({ jobIds: [...keyed, ...plain] })
            .catch(() => ({ jobs: [] }));
          const unfinished = jobs
            .filter((j) => j.state !== 3)
            .map((j) => ({
              id: j.jobId,
              state: j.state,
              attemptsRemaining: j.attemptsRemaining,
              status: j.customStatus,
            }));
          void worker.stop();
          reject(
            new Error(
              `worker did not finish: ${done.length}/45 done; unfinished ${JSON.stringify(unfinished)}; brokers ${JSON.stringify(running.map((r) => r.membership.brokers().length))}`,
            ),
          );
        }, 15_000);
      });
      await Promise.race([worker.run(), stuck]).finally(() => clearTimeout(deadline));
      expect(keyedOverlap).toBe(false); // jobs sharing a key never ran at the same time
      expect(done.filter((b) => b.startsWith("k"))).toEqual(["k0", "k1", "k2", "k3", "k4"]); // in enqueue order
      const { count } = await frontend.client.jobs.countJobs({ queue: "sdk", state: 3 /* SUCCEEDED */ });
      expect(count).toBe(BigInt(keyed.length + plain.length));
    },
  );

  it("serves a queue whose partitions grew through a frontend, old and new partitions alike", async () => {
    const start = cluster();
    const a = await start("broker");
    const b = await start("broker");
    const frontend = await start("frontend");
    await until(() => frontend.server.membership.brokers().length === 2, "the frontend to see both brokers");
    await frontend.client.createQueue("growing", { partitions: 2 });
    const ids = await frontend.client.enqueueMany(bodies(50).map((j) => ({ ...j, queue: "growing" })));
    const seen = await drain(frontend.client, "growing", 20);
    await frontend.client.queues.updateQueue({
      name: "growing",
      config: { partitions: 6 },
      updateMask: { paths: ["partitions"] },
    });
    ids.push(...(await frontend.client.enqueueMany(bodies(120).map((j) => ({ ...j, queue: "growing" })))));
    await drain(frontend.client, "growing", 170, seen);
    expect(seen).toHaveLength(170);
    expect(new Set(seen)).toEqual(new Set(ids));
    // The new partitions were served by the brokers (both took part once there were six).
    expect(new Set(ids.map((id) => Number(id.split(".")[1]))).size).toBe(6);
    expect(a.server.broker!.claimStats.queries).toBeGreaterThan(0);
    expect(b.server.broker!.claimStats.queries).toBeGreaterThan(0);
  });

  it("runs the claim-timeout sweep on one broker only, and it still expires claims", async () => {
    const start = cluster();
    const a = await start();
    const b = await start();
    await until(
      () => a.server.membership.brokers().length === 2 && b.server.membership.brokers().length === 2,
      "two brokers",
    );
    const before = [a, b].map((n) => n.server.maintenance.rounds.sweeps);
    await a.client.createQueue("expiring", { claimTimeoutMs: 200, retryPolicy: { initialDelayMs: 1, maxDelayMs: 1 } });
    const [id] = await a.client.enqueueMany([{ queue: "expiring", body: new Uint8Array([1]) }]);
    expect((await a.client.worker.dequeue({ queue: "expiring", limit: 1 })).jobs.map((j) => j.jobId)).toEqual([id]);
    // Never acked: the claim runs out and the job is handed out again, attempt 2.
    const again = await b.client.worker.dequeue({ queue: "expiring", limit: 1, wait: { seconds: 5n, nanos: 0 } });
    expect(again.jobs.map((j) => [j.jobId, j.attempt])).toEqual([[id, 2]]);
    const swept = [a, b].map((n, i) => n.server.maintenance.rounds.sweeps - before[i]!);
    expect(swept.filter((n) => n > 0)).toHaveLength(1);
    expect([a, b].filter((n) => n.server.membership.leads())).toHaveLength(1);
  });

  it("splits a queue's rate limit between the brokers owning its partitions", async () => {
    const start = cluster();
    const a = await start();
    const b = await start();
    await until(
      () => a.server.membership.brokers().length === 2 && b.server.membership.brokers().length === 2,
      "two brokers",
    );
    await a.client.createQueue("limited", { partitions: 4, maxDequeuePerSecond: 20 });
    await a.client.enqueueMany(bodies(200).map((j) => ({ ...j, queue: "limited" })));
    // Each broker's bucket holds its share of one second's worth: both together hand out
    // about 20 at once, not 20 each.
    const got = await Promise.all(
      [a, b].map((n) => n.client.worker.dequeue({ queue: "limited", limit: 100, wait: { seconds: 0n, nanos: 0 } })),
    );
    const total = got.reduce((n, r) => n + r.jobs.length, 0);
    expect(total).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(22);
  });
});
