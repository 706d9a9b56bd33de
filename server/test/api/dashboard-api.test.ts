/**
 * What the web dashboard reads beyond the original API (docs/dashboard.md): per-queue
 * counters in QueueStats (throughput), ClusterInfoService (brokers, partitions, lease
 * epochs); and the static files at /ui, with the flag that turns them off.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ClusterInfoService } from "@runlater/sdk/gen/cluster_info_service_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { fakeBuild } from "./ui-build.js";

let server: RunningServer | undefined;
afterEach(() => server?.stop());

async function start(o: Partial<ServerOptions> = {}) {
  server = await startServer({ store: new MemoryStore(), port: 0, ...o });
  const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
  return {
    queues: createClient(QueueService, transport),
    jobs: createClient(JobService, transport),
    worker: createClient(WorkerService, transport),
    cluster: createClient(ClusterInfoService, transport),
  };
}

describe("QueueStats.counters", () => {
  it("counts enqueues, success acks and failed attempts (failure acks, expired claims) since the node started", async () => {
    const clock = new ManualClock(Date.now());
    const { queues, jobs, worker } = await start({ clock });
    await queues.createQueue({ name: "q", config: { claimTimeout: { seconds: 1n } } });
    await jobs.enqueue({ jobs: Array.from({ length: 5 }, () => ({ queue: "q" })) });
    const [a, b, c] = (await worker.dequeue({ queue: "q", limit: 3 })).jobs;
    await worker.ack({
      queue: "q",
      succeeded: [{ jobId: a!.jobId, claimToken: a!.claimToken }],
      failed: [{ jobId: b!.jobId, claimToken: b!.claimToken }],
    });
    expect(c).toBeDefined();
    await clock.advance(1000);
    await server!.maintenance.sweepClaims(); // c ran out
    const counters = (await queues.getQueue({ name: "q" })).queue!.stats!.counters!;
    expect(counters.enqueued).toBe(5n);
    expect(counters.succeeded).toBe(1n);
    expect(counters.failed).toBe(2n);
    expect(Number(counters.countingSince!.seconds) * 1000).toBeLessThanOrEqual(clock.now());
    const listed = (await queues.listQueues({})).queues.find((q) => q.name === "q")!;
    expect(listed.stats!.counters!.enqueued).toBe(5n);
  });

  it("starts again from zero for a queue deleted and created anew", async () => {
    const { queues, jobs } = await start();
    await queues.createQueue({ name: "q" });
    await jobs.enqueue({ jobs: [{ queue: "q" }] });
    await queues.deleteQueue({ name: "q" });
    const created = await queues.createQueue({ name: "q" });
    expect(created.queue!.stats!.counters!.enqueued).toBe(0n);
  });
});

describe("ClusterInfoService", () => {
  it("lists the one broker of a single node with every partition it owns and the epochs of the leases it holds", async () => {
    const { queues, jobs, worker, cluster } = await start();
    await queues.createQueue({ name: "b", config: { partitions: 3 } });
    await queues.createQueue({ name: "a" });
    await jobs.enqueue({ jobs: [{ queue: "a" }] });
    expect((await worker.dequeue({ queue: "a", limit: 1 })).jobs).toHaveLength(1); // takes a's lease
    const info = await cluster.getClusterInfo({});
    expect(info.nodeRole).toBe("all");
    expect(info.brokers).toHaveLength(1);
    const [broker] = info.brokers;
    expect(broker!.brokerId).toBe(info.nodeBrokerId);
    expect(broker!.leader).toBe(true);
    expect(broker!.url).toBe(server!.url);
    expect(broker!.partitions.map((p) => `${p.queue}/${p.partition}`)).toEqual(["a/0", "b/0", "b/1", "b/2"]);
    const a0 = broker!.partitions[0]!;
    expect(a0.leaseEpoch).toBeGreaterThan(0n);
    expect(a0.leaseExpiresAt).toBeDefined();
  });
});

describe("the dashboard's files at /ui", () => {
  it("serves index.html at /ui/, assets by name (gzipped when asked, immutable when hashed), redirects / and /ui", async () => {
    await start({ uiDir: fakeBuild() });
    const url = server!.url;
    const index = await fetch(`${url}/ui/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    expect(index.headers.get("content-security-policy")).toContain("connect-src 'self'");
    expect(await index.text()).toContain("main-ABCDEF23.js");

    const raw = await fetch(`${url}/ui/main-ABCDEF23.js`, { headers: { "accept-encoding": "identity" } });
    expect(raw.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(raw.headers.get("cache-control")).toContain("immutable");
    expect(raw.headers.get("content-encoding")).toBeNull();
    const plain = await raw.text();
    // node's fetch decodes gzip itself: compare what arrived over the wire through http.get instead.
    const { get } = await import("node:http");
    const zipped = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) =>
      get(`${url}/ui/main-ABCDEF23.js`, { headers: { "accept-encoding": "gzip" } }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (d: Buffer) => parts.push(d));
        res.on("end", () =>
          resolve({ encoding: res.headers["content-encoding"] as string, body: Buffer.concat(parts) }),
        );
      }).on("error", reject),
    );
    expect(zipped.encoding).toBe("gzip");
    expect(zipped.body.length).toBeLessThan(plain.length);
    expect(gunzipSync(zipped.body).toString()).toBe(plain);

    for (const path of ["/ui/notes.txt", "/ui/../package.json", "/ui/%2e%2e/package.json", "/ui/nope.js"]) {
      expect((await fetch(`${url}${path}`)).status, path).toBe(404);
    }
    const root = await fetch(`${url}/`, { redirect: "manual" });
    expect([root.status, root.headers.get("location")]).toEqual([302, "/ui/"]);
    const bare = await fetch(`${url}/ui`, { redirect: "manual" });
    expect([bare.status, bare.headers.get("location")]).toEqual([308, "/ui/"]);
  });

  it("says how to build the dashboard when the build is missing", async () => {
    await start({ uiDir: join(tmpdir(), "runlater-no-such-build") });
    const res = await fetch(`${server!.url}/ui/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("npm run build:ui");
  });

  it("serves nothing at /ui or / with ui: false (the --no-ui flag), and the API still answers", async () => {
    const { queues } = await start({ ui: false, uiDir: fakeBuild() });
    expect((await fetch(`${server!.url}/ui/`)).status).toBe(404);
    expect((await fetch(`${server!.url}/`, { redirect: "manual" })).status).toBe(404);
    expect((await queues.listQueues({})).queues).toEqual([]);
  });
});
