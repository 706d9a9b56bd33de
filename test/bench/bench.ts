/**
 * End-to-end benchmark: a real server process (any store), producers enqueueing in
 * batches, SDK Workers dequeuing in batches with long poll and ACKing in batches.
 * Prints enqueue jobs/s, processed jobs/s and Dequeue latency percentiles.
 *
 *   npm run bench -- [--store URL]... [--jobs 200000] [--batch 100] [--workers 2]
 *                    [--concurrency 200] [--payload 200] [--protocol connect|grpc]
 *                    [--compare-bullmq]   (with a redis:// store: BullMQ on the same Redis, same settings)
 *                    [--compare-skip-locked]  (with a mysql:// store: workers claiming straight from
 *                                          a table with SELECT … FOR UPDATE SKIP LOCKED, same jobs in flight)
 *
 * Figures belong in docs/benchmarks.md together with the machine and these settings.
 */
import { spawn } from "node:child_process";
import { cpus, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { Interceptor } from "@connectrpc/connect";
import { createRunlaterClient, type RunlaterClient, Worker } from "@runlater/sdk";
import { runBullmq } from "./bullmq.js";
import { runDirectMysql } from "./mysql-direct.js";

const { values: args } = parseArgs({
  options: {
    store: { type: "string", multiple: true, default: [] },
    jobs: { type: "string", default: "200000" },
    batch: { type: "string", default: "100" },
    workers: { type: "string", default: "2" },
    concurrency: { type: "string", default: "200" },
    payload: { type: "string", default: "200" },
    "enqueue-batch": { type: "string", default: "1000" },
    "enqueue-parallel": { type: "string", default: "4" },
    protocol: { type: "string", default: "connect" },
    "buffer-size": { type: "string", default: "2000" },
    "compare-bullmq": { type: "boolean", default: false },
    "compare-skip-locked": { type: "boolean", default: false },
  },
});

const jobs = Number(args.jobs);
const batch = Number(args.batch);
const workers = Number(args.workers);
const concurrency = Number(args.concurrency);
const payload = new Uint8Array(Number(args.payload)).fill(120);
const enqueueBatch = Number(args["enqueue-batch"]);
const enqueueParallel = Number(args["enqueue-parallel"]);
const protocol = args.protocol as "connect" | "grpc";

async function startServerProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
  const bin = fileURLToPath(new URL("../../server/bin/runlater.js", import.meta.url));
  const storeArgs = (args.store as string[]).flatMap((s) => ["--store", s]);
  const child = spawn(process.execPath, [...(process.env.BENCH_SERVER_NODE_FLAGS ?? "").split(" ").filter(Boolean), bin, "serve", "--port", "0", "--log-level", "warn", "--buffer-size", String(args["buffer-size"]), ...storeArgs], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (\S+)/.exec(seen);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function enqueueAll(client: RunlaterClient, queue: string): Promise<number> {
  const started = performance.now();
  let next = 0;
  const producer = async () => {
    while (next < jobs) {
      const count = Math.min(enqueueBatch, jobs - next);
      next += count;
      await client.jobs.enqueue({ jobs: Array.from({ length: count }, () => ({ queue, body: payload })) });
    }
  };
  await Promise.all(Array.from({ length: enqueueParallel }, producer));
  return performance.now() - started;
}

async function processAll(url: string, queue: string): Promise<{ ms: number; dequeueMs: number[]; calls: Record<string, number> }> {
  const dequeueMs: number[] = [];
  const calls: Record<string, number> = {};
  const timing: Interceptor = (next) => async (req) => {
    calls[req.method.name] = (calls[req.method.name] ?? 0) + 1;
    const t = performance.now();
    const res = await next(req);
    if (req.method.name === "Dequeue") dequeueMs.push(performance.now() - t);
    return res;
  };
  let processed = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  const clients = Array.from({ length: workers }, () => createRunlaterClient(url, { protocol, httpVersion: "2", interceptors: [timing] }));
  const pool = clients.map(
    (client) =>
      new Worker({
        client,
        queue,
        concurrency,
        batchSize: batch,
        pollWaitMs: 1000,
        onError: (err, ctx) => console.error("worker error", ctx, err),
        handler: async () => {
          if (++processed === jobs) resolveDone();
        },
      }),
  );
  const started = performance.now();
  for (const w of pool) w.start();
  await done;
  await Promise.all(pool.map((w) => w.stop())); // flushes the last acks
  const ms = performance.now() - started;
  for (const c of clients) c.close();
  return { ms, dequeueMs: dequeueMs.sort((a, b) => a - b), calls };
}

/**
 * Latency of one Dequeue of `batch` jobs served from the broker's buffer, with the
 * previous batch's ACKs piggy-backed: one client, one call in flight, a full queue.
 */
async function dequeueLatency(client: RunlaterClient, queue: string, count: number): Promise<number[]> {
  const samples: number[] = [];
  let ack: { succeeded: Array<{ jobId: string; claimToken: string }> } | undefined;
  for (let done = 0; done < count; ) {
    const t = performance.now();
    const res = await client.worker.dequeue({ queue, limit: batch, ack });
    samples.push(performance.now() - t);
    done += res.jobs.length;
    ack = { succeeded: res.jobs.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken })) };
    if (res.jobs.length === 0) break;
  }
  if (ack) await client.worker.ack({ queue, ...ack });
  return samples.sort((a, b) => a - b);
}

async function main(): Promise<void> {
  const server = await startServerProcess();
  const admin = createRunlaterClient(server.url, { protocol, httpVersion: "2" });
  const queue = `bench_${Date.now()}`;
  try {
    await admin.createQueue(queue, { claimTimeoutMs: 60_000 });
    const enqueueMs = await enqueueAll(admin, queue);
    const run = await processAll(server.url, queue);
    const { queue: q } = await admin.queues.getQueue({ name: queue });
    const latencyQueue = `${queue}_latency`;
    await admin.createQueue(latencyQueue, { claimTimeoutMs: 60_000 });
    const latencyJobs = Math.min(jobs, 50_000);
    for (let i = 0; i < latencyJobs; i += enqueueBatch) {
      await admin.jobs.enqueue({ jobs: Array.from({ length: Math.min(enqueueBatch, latencyJobs - i) }, () => ({ queue: latencyQueue, body: payload })) });
    }
    const latency = await dequeueLatency(admin, latencyQueue, latencyJobs);
    const succeeded = Number(q?.stats?.succeeded ?? 0);
    const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
    console.log(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`);
    console.log(
      `settings: store=${(args.store as string[]).join(",") || "memory"} jobs=${jobs} payload=${payload.length}B enqueue-batch=${enqueueBatch}x${enqueueParallel} ` +
        `workers=${workers} concurrency=${concurrency} dequeue-batch=${batch} protocol=${protocol} h2c buffer=${args["buffer-size"]}`,
    );
    console.log(`enqueue:   ${fmt((jobs / enqueueMs) * 1000)} jobs/s (${fmt(enqueueMs)} ms)`);
    console.log(`processed: ${fmt((jobs / run.ms) * 1000)} jobs/s end to end (${fmt(run.ms)} ms; ${succeeded} SUCCEEDED)`);
    console.log(`dequeue under load: p50 ${percentile(run.dequeueMs, 50).toFixed(2)} ms, p99 ${percentile(run.dequeueMs, 99).toFixed(2)} ms over ${run.dequeueMs.length} calls (all workers at full speed)`);
    console.log(`dequeue alone: p50 ${percentile(latency, 50).toFixed(2)} ms, p99 ${percentile(latency, 99).toFixed(2)} ms over ${latency.length} calls of ${batch} jobs + piggy-backed acks, one in flight`);
    console.log(`calls:     ${Object.entries(run.calls).map(([k, v]) => `${k}=${v}`).join(" ")}`);
    if (args["compare-bullmq"]) {
      const redisUrl = (args.store as string[]).find((u) => u.startsWith("redis://"));
      if (!redisUrl) throw new Error("--compare-bullmq needs a --store redis://… (BullMQ runs on the same Redis)");
      const bull = await runBullmq({ redisUrl, jobs, payloadBytes: payload.length, enqueueBatch, enqueueParallel, workers, concurrency });
      const ours = (jobs / run.ms) * 1000;
      const theirs = (jobs / bull.processMs) * 1000;
      console.log(`bullmq:    enqueue ${fmt((jobs / bull.enqueueMs) * 1000)} jobs/s, processed ${fmt(theirs)} jobs/s end to end (same Redis, ${workers} workers × concurrency ${concurrency})`);
      console.log(`ratio:     runlater / bullmq = ${(ours / theirs).toFixed(2)}× processed, ${((jobs / enqueueMs) / (jobs / bull.enqueueMs)).toFixed(2)}× enqueue`);
    }
    if (args["compare-skip-locked"]) {
      const mysqlUrl = (args.store as string[]).find((u) => u.startsWith("mysql://"));
      if (!mysqlUrl) throw new Error("--compare-skip-locked needs a --store mysql://… (it runs on the same database)");
      const claimers = workers * Math.ceil(concurrency / batch);
      const direct = await runDirectMysql({ mysqlUrl, jobs, payloadBytes: payload.length, claimers, batch });
      const theirs = (jobs / direct.processMs) * 1000;
      console.log(
        `skip locked: processed ${fmt(theirs)} jobs/s with ${claimers} claimers × ${batch} jobs; ${direct.claimQueries} claim queries, ` +
          `${direct.emptyClaims} empty (${((100 * direct.emptyClaims) / Math.max(1, direct.claimQueries)).toFixed(1)} %), ${direct.lockErrors} deadlocks/lock timeouts`,
      );
      console.log(`ratio:     runlater (broker) / direct SKIP LOCKED = ${(((jobs / run.ms) * 1000) / theirs).toFixed(2)}× processed`);
    }
    if (succeeded !== jobs) {
      console.error(`expected ${jobs} SUCCEEDED, server reports ${succeeded}`);
      process.exitCode = 1;
    }
  } finally {
    // Leave the store as we found it (a shared Redis or MariaDB keeps what we wrote).
    await admin.queues.deleteQueue({ name: queue }).catch(() => {});
    await admin.queues.deleteQueue({ name: `${queue}_latency` }).catch(() => {});
    admin.close();
    await server.stop();
  }
}

await main();
