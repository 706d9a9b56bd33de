/**
 * End-to-end benchmark: a real server process (any store), producers enqueueing in
 * batches, SDK Workers taking jobs over DequeueStream (or batched long-polling Dequeue
 * calls) and ACKing in batches.
 * Prints enqueue jobs/s, processed jobs/s, Dequeue latency percentiles and the CPU
 * time per job of each process (cpu.ts).
 *
 *   npm run bench -- [--store URL]... [--jobs 200000] [--batch 100] [--workers 2]
 *                    [--worker-defaults]  (the Workers' batch size and long-poll wait left to the SDK's
 *                                          defaults, as the README makes a Worker; --batch is then only
 *                                          the "Dequeue alone" figure's)
 *                    (--store: default memory; sqlite:PATH for the SQLite store, best on a new file)
 *                    [--concurrency 200] [--payload 200] [--protocol connect|grpc]
 *                    [--dequeue-mode stream|poll]  (the Workers': one DequeueStream each (default), or
 *                                          Dequeue calls with piggy-backed acks)
 *                    [--buffer-size N]    (the server's; default: the store's default)
 *                    [--compare-bullmq]   (BullMQ, same settings, on the redis:// store's Redis, or with another
 *                                          store on --bullmq-redis URL / $RUNLATER_TEST_REDIS_URL)
 *                    [--compare-memory]   (the same workload on a second server with the memory store)
 *                    [--rounds N]         (with --compare-bullmq: N alternating rounds of both, each on a
 *                                          fresh queue, and the ratios' median: this machine's figures
 *                                          swing too much for one pair to mean much)
 *                    [--warm-up 10000]    (with --compare-bullmq: jobs through each system first, untimed; 0: none)
 *                    [--compare-skip-locked]  (with a mysql:// store: workers claiming straight from
 *                                          a table with SELECT … FOR UPDATE SKIP LOCKED, same jobs in flight)
 *                    [--brokers 1,2,3]   (cluster mode, redis:// or mysql:// store: for each count, 1 frontend
 *                                          + that many brokers as processes; producers enqueue through the
 *                                          frontend, the workers are spread round-robin over the brokers
 *                                          (--workers-on frontend: all on the frontend, which forwards))
 *                    [--partitions N]    (partitions of the benchmark queue: default 1, 6 in cluster mode)
 *                    [--claim-timeout MS] (the queue's claim timeout, default 60000: shorter, and the
 *                                          claim-timeout sweep's work for the jobs falls inside the run)
 *
 *   npm run bench -- --pickup …  (pickup latency at a fixed enqueue rate: see pickup.ts)
 *   npm run bench -- --unary …   (unary Enqueue over HTTP/1.1 and HTTP/2: see unary.ts)
 *
 * Figures belong in docs/benchmarks.md together with the machine and these settings.
 */
import { cpus, totalmem } from "node:os";
import { parseArgs } from "node:util";
import type { Interceptor } from "@connectrpc/connect";
import { createRunlaterClient, type RunlaterClient, Worker } from "@runlater/sdk";
import { type Cluster, startCluster } from "../cluster/harness.js";
import { runBullmq } from "./bullmq.js";
import { CpuMeter, storePids } from "./cpu.js";
import { runDirectMysql } from "./mysql-direct.js";
import { runPickup } from "./pickup.js";
import { percentile, type ServerProcess, startServerProcess } from "./server-process.js";
import { runUnary } from "./unary.js";

/** --pickup and --unary: benchmarks of their own (pickup.ts, unary.ts), with options of their own. */
const pickup = process.argv.includes("--pickup");
const unary = process.argv.includes("--unary");
const { values: args } = parseArgs({
  args: pickup || unary ? [] : process.argv.slice(2),
  options: {
    store: { type: "string", multiple: true, default: [] },
    jobs: { type: "string", default: "200000" },
    batch: { type: "string", default: "100" },
    "worker-defaults": { type: "boolean", default: false },
    workers: { type: "string", default: "2" },
    concurrency: { type: "string", default: "200" },
    payload: { type: "string", default: "200" },
    "enqueue-batch": { type: "string", default: "1000" },
    "enqueue-parallel": { type: "string", default: "4" },
    protocol: { type: "string", default: "connect" },
    "dequeue-mode": { type: "string", default: "stream" },
    "buffer-size": { type: "string" }, // default: the server's (the store's defaultBufferSize)
    "compare-bullmq": { type: "boolean", default: false },
    "bullmq-redis": { type: "string" },
    "compare-memory": { type: "boolean", default: false },
    rounds: { type: "string", default: "1" },
    "warm-up": { type: "string", default: "10000" },
    "compare-skip-locked": { type: "boolean", default: false },
    brokers: { type: "string" },
    partitions: { type: "string" },
    "claim-timeout": { type: "string", default: "60000" },
    "workers-on": { type: "string", default: "brokers" },
  },
});

const jobs = Number(args.jobs);
const batch = Number(args.batch);
const workerDefaults = args["worker-defaults"];
const workers = Number(args.workers);
const concurrency = Number(args.concurrency);
const payload = new Uint8Array(Number(args.payload)).fill(120);
const enqueueBatch = Number(args["enqueue-batch"]);
const enqueueParallel = Number(args["enqueue-parallel"]);
const protocol = args.protocol as "connect" | "grpc";
const dequeueMode = args["dequeue-mode"] as "stream" | "poll";
if (dequeueMode !== "stream" && dequeueMode !== "poll")
  throw new Error(`--dequeue-mode is stream or poll, not ${String(dequeueMode)}`);
const claimTimeoutMs = Number(args["claim-timeout"]);
/** The memory store unless --store says otherwise (the server's own default is a SQLite file in its working directory). */
const stores = (args.store as string[]).length > 0 ? (args.store as string[]) : ["memory"];

/** The server with this run's stores and --buffer-size. */
function startServer(storeUrls = stores): Promise<ServerProcess> {
  return startServerProcess(storeUrls, args["buffer-size"] === undefined ? [] : ["--buffer-size", args["buffer-size"]]);
}

async function enqueueAll(client: RunlaterClient, queue: string, total = jobs): Promise<number> {
  const started = performance.now();
  let next = 0;
  const producer = async () => {
    while (next < total) {
      const count = Math.min(enqueueBatch, total - next);
      next += count;
      await client.jobs.enqueue({ jobs: Array.from({ length: count }, () => ({ queue, body: payload })) });
    }
  };
  await Promise.all(Array.from({ length: enqueueParallel }, producer));
  return performance.now() - started;
}

/** Runs the workers until every job is processed; several URLs: the workers are spread over them round-robin. */
async function processAll(
  url: string | string[],
  queue: string,
  total = jobs,
): Promise<{ ms: number; dequeueMs: number[]; calls: Record<string, number> }> {
  const urls = Array.isArray(url) ? url : [url];
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
  const clients = Array.from({ length: workers }, (_, i) =>
    createRunlaterClient(urls[i % urls.length]!, { protocol, httpVersion: "2", interceptors: [timing] }),
  );
  const pool = clients.map(
    (client) =>
      new Worker({
        client,
        queue,
        concurrency,
        // --worker-defaults: the Worker as the README makes it (its own batch size and long-poll wait).
        ...(workerDefaults ? {} : { batchSize: batch, pollWaitMs: 1000 }),
        dequeueMode,
        onError: (err, ctx) => console.error("worker error", ctx, err),
        handler: async () => {
          if (++processed === total) resolveDone();
        },
      }),
  );
  const started = performance.now();
  await Promise.all(pool.map((w) => w.start()));
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

/**
 * --compare-bullmq: --warm-up jobs through each system first, untimed, so that no round
 * measures a server (or a BullMQ worker) whose code has not been compiled yet: the first
 * of three rounds was always the slowest, and a median of three then rested on two rounds.
 */
async function warmUp(server: ServerProcess, admin: RunlaterClient, queue: string): Promise<void> {
  const count = Number(args["warm-up"]);
  if (!(count > 0)) return;
  const warm = `${queue}_warm`;
  await admin.createQueue(warm, { claimTimeoutMs, partitions: Number(args.partitions ?? 1) });
  await enqueueAll(admin, warm, count);
  await processAll(server.url, warm, count);
  await admin.queues.deleteQueue({ name: warm });
  await runBullmq({
    redisUrl: bullmqRedis(),
    jobs: count,
    payloadBytes: payload.length,
    enqueueBatch,
    enqueueParallel,
    workers,
    concurrency,
  });
}

/** The Redis BullMQ runs on: the redis:// store's, --bullmq-redis or $RUNLATER_TEST_REDIS_URL. */
function bullmqRedis(): string {
  const url =
    stores.find((u) => u.startsWith("redis://")) ?? args["bullmq-redis"] ?? process.env.RUNLATER_TEST_REDIS_URL;
  if (!url)
    throw new Error(
      "--compare-bullmq needs a Redis: a --store redis://… (BullMQ runs on the same one), --bullmq-redis URL or $RUNLATER_TEST_REDIS_URL",
    );
  return url;
}

async function main(): Promise<void> {
  if (Number(args.rounds) > 1 && !args["compare-bullmq"]) throw new Error("--rounds goes with --compare-bullmq");
  if (args.brokers !== undefined) return mainCluster(args.brokers.split(",").map(Number));
  const server = await startServer();
  const admin = createRunlaterClient(server.url, { protocol, httpVersion: "2" });
  const queue = `bench_${Date.now()}`;
  try {
    await admin.createQueue(queue, { claimTimeoutMs, partitions: Number(args.partitions ?? 1) });
    const storeUrl = stores[0];
    // Only a store server of its own (Redis, MariaDB) has a process to measure; memory and SQLite live in the server's.
    const storeProcesses = storeUrl?.includes("://") ? await storePids(storeUrl) : {};
    const meter = new CpuMeter({ server: server.pid, ...storeProcesses });
    if (args["compare-bullmq"]) await warmUp(server, admin, queue);
    meter.start();
    const enqueueMs = await enqueueAll(admin, queue);
    const enqueueCpu = meter.stop(jobs);
    meter.start();
    const run = await processAll(server.url, queue);
    const processCpu = meter.stop(jobs);
    const { queue: q } = await admin.queues.getQueue({ name: queue });
    const latencyQueue = `${queue}_latency`;
    await admin.createQueue(latencyQueue, { claimTimeoutMs: 60_000 });
    const latencyJobs = Math.min(jobs, 50_000);
    for (let i = 0; i < latencyJobs; i += enqueueBatch) {
      await admin.jobs.enqueue({
        jobs: Array.from({ length: Math.min(enqueueBatch, latencyJobs - i) }, () => ({
          queue: latencyQueue,
          body: payload,
        })),
      });
    }
    const latency = await dequeueLatency(admin, latencyQueue, latencyJobs);
    const succeeded = Number(q?.stats?.succeeded ?? 0);
    const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
    console.log(
      `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
    );
    console.log(
      `settings: store=${stores.join(",")} jobs=${jobs} payload=${payload.length}B enqueue-batch=${enqueueBatch}x${enqueueParallel} ` +
        `partitions=${args.partitions ?? 1} claim-timeout=${claimTimeoutMs}ms workers=${workers} concurrency=${concurrency} dequeue-batch=${workerDefaults ? "the Worker's default" : batch} dequeue-mode=${dequeueMode} protocol=${protocol} h2c buffer=${args["buffer-size"] ?? "default"}`,
    );
    console.log(`enqueue:   ${fmt((jobs / enqueueMs) * 1000)} jobs/s (${fmt(enqueueMs)} ms)`);
    console.log(
      `processed: ${fmt((jobs / run.ms) * 1000)} jobs/s end to end (${fmt(run.ms)} ms; ${succeeded} SUCCEEDED)`,
    );
    if (run.dequeueMs.length > 0) {
      console.log(
        `dequeue under load: p50 ${percentile(run.dequeueMs, 50).toFixed(2)} ms, p99 ${percentile(run.dequeueMs, 99).toFixed(2)} ms over ${run.dequeueMs.length} calls (all workers at full speed)`,
      );
    }
    console.log(
      `dequeue alone: p50 ${percentile(latency, 50).toFixed(2)} ms, p99 ${percentile(latency, 99).toFixed(2)} ms over ${latency.length} calls of ${batch} jobs + piggy-backed acks, one in flight`,
    );
    console.log(
      `calls:     ${Object.entries(run.calls)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
    console.log(`cpu, enqueue:   ${enqueueCpu}`);
    console.log(`cpu, processed: ${processCpu}`);
    if (args["compare-bullmq"]) {
      const redisUrl = bullmqRedis();
      const bullmq = () =>
        runBullmq({
          redisUrl,
          jobs,
          payloadBytes: payload.length,
          enqueueBatch,
          enqueueParallel,
          workers,
          concurrency,
        });
      const bull = await bullmq();
      const ours = (jobs / run.ms) * 1000;
      const theirs = (jobs / bull.processMs) * 1000;
      console.log(
        `bullmq:    enqueue ${fmt((jobs / bull.enqueueMs) * 1000)} jobs/s, processed ${fmt(theirs)} jobs/s end to end (${redisUrl}, ${workers} workers × concurrency ${concurrency})`,
      );
      console.log(
        `ratio:     runlater / bullmq = ${(ours / theirs).toFixed(2)}× processed, ${(jobs / enqueueMs / (jobs / bull.enqueueMs)).toFixed(2)}× enqueue`,
      );
      const ratios = [ours / theirs];
      for (let round = 2; round <= Number(args.rounds); round++) {
        const again = `${queue}_r${round}`;
        await admin.createQueue(again, { claimTimeoutMs, partitions: Number(args.partitions ?? 1) });
        await enqueueAll(admin, again);
        const mine = (jobs / (await processAll(server.url, again)).ms) * 1000;
        await admin.queues.deleteQueue({ name: again });
        const other = (jobs / (await bullmq()).processMs) * 1000;
        ratios.push(mine / other);
        console.log(
          `round ${round}:   runlater ${fmt(mine)} jobs/s, bullmq ${fmt(other)} jobs/s: ${(mine / other).toFixed(2)}× processed`,
        );
      }
      if (ratios.length > 1) {
        const sorted = [...ratios].sort((a, b) => a - b);
        const median =
          sorted.length % 2
            ? sorted[(sorted.length - 1) / 2]!
            : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
        console.log(
          `rounds:    ${ratios.map((r) => `${r.toFixed(2)}×`).join(" ")}; median ${median.toFixed(2)}× processed`,
        );
      }
    }
    if (args["compare-memory"]) {
      const memory = await runOnMemory();
      const ours = (jobs / run.ms) * 1000;
      const under =
        memory.dequeueMs.length > 0
          ? `; dequeue under load p50 ${percentile(memory.dequeueMs, 50).toFixed(2)} ms, p99 ${percentile(memory.dequeueMs, 99).toFixed(2)} ms`
          : "";
      console.log(
        `memory:    enqueue ${fmt((jobs / memory.enqueueMs) * 1000)} jobs/s, processed ${fmt(memory.processedPerS)} jobs/s end to end${under} (a second server, same settings)`,
      );
      console.log(`ratio:     ${stores.join(",")} / memory = ${(ours / memory.processedPerS).toFixed(2)}× processed`);
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
      console.log(
        `ratio:     runlater (broker) / direct SKIP LOCKED = ${(((jobs / run.ms) * 1000) / theirs).toFixed(2)}× processed`,
      );
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

/** The same enqueue and process phases on a second server with the memory store, for --compare-memory. */
async function runOnMemory(): Promise<{ enqueueMs: number; processedPerS: number; dequeueMs: number[] }> {
  const server = await startServer(["memory"]);
  const admin = createRunlaterClient(server.url, { protocol, httpVersion: "2" });
  try {
    const queue = `bench_memory_${Date.now()}`;
    await admin.createQueue(queue, { claimTimeoutMs, partitions: Number(args.partitions ?? 1) });
    const enqueueMs = await enqueueAll(admin, queue);
    const run = await processAll(server.url, queue);
    return { enqueueMs, processedPerS: (jobs / run.ms) * 1000, dequeueMs: run.dequeueMs };
  } finally {
    admin.close();
    await server.stop();
  }
}

interface ClusterFigures {
  brokers: number;
  enqueuePerS: number;
  processedPerS: number;
  processedMs: number;
  succeeded: number;
  underLoad: number[];
  direct: number[];
  forwarded: number[];
  calls: Record<string, number>;
  /** Claim queries of all brokers, and how many found nothing (from their "stopped" log line). */
  claimQueries: number;
  emptyClaimQueries: number;
  /** "broker-N queries/empty" per broker. */
  claimsByBroker: string[];
  /** "broker-N partitions" of the benchmark queue at the end of the run. */
  partitionsByBroker: string[];
}

/** One cluster run: 1 frontend + `brokers` brokers as processes, the same workload as the single-server bench. */
async function runCluster(brokers: number): Promise<ClusterFigures> {
  const nodeArgs = (process.env.BENCH_SERVER_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  // Log level info: the brokers' "partition acquired" lines tell which one owns the latency queue.
  const cluster: Cluster = await startCluster({
    store: args.store as string[],
    brokers,
    frontends: 1,
    bufferSize: args["buffer-size"] === undefined ? undefined : Number(args["buffer-size"]),
    logLevel: "info",
    nodeArgs,
  });
  const admin = createRunlaterClient(cluster.frontend.url, { protocol, httpVersion: "2" });
  const queue = `bench_c${brokers}_${Date.now()}`;
  const latencyQueue = `${queue}_latency`;
  let figures: ClusterFigures;
  try {
    await admin.createQueue(queue, { claimTimeoutMs, partitions: Number(args.partitions ?? 6) });
    const enqueueMs = await enqueueAll(admin, queue);
    const targets = args["workers-on"] === "frontend" ? [cluster.frontend.url] : cluster.brokers.map((b) => b.url);
    const run = await processAll(targets, queue);
    const { queue: q } = await admin.queues.getQueue({ name: queue });
    // Rendezvous hashing of few partitions over few brokers is uneven: say how they fell.
    const perBroker = new Map(cluster.brokers.map((b) => [b.name, 0]));
    for (const name of cluster.owners(queue).values()) perBroker.set(name, perBroker.get(name)! + 1);

    // Dequeue alone: a one-partition queue, 100-job calls straight to the broker that owns
    // it (served from its buffer), then the same calls through the frontend (forwarded).
    await admin.createQueue(latencyQueue, { claimTimeoutMs: 60_000, partitions: 1 });
    const latencyJobs = Math.min(jobs, 50_000);
    for (let i = 0; i < latencyJobs; i += enqueueBatch) {
      await admin.jobs.enqueue({
        jobs: Array.from({ length: Math.min(enqueueBatch, latencyJobs - i) }, () => ({
          queue: latencyQueue,
          body: payload,
        })),
      });
    }
    const warm = await admin.worker.dequeue({ queue: latencyQueue, limit: 1 });
    await admin.worker.ack({
      queue: latencyQueue,
      succeeded: warm.jobs.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken })),
    });
    const owners = await cluster.waitForOwners(latencyQueue, 1, 15_000);
    const owner = cluster.brokers.find((b) => b.name === [...owners.values()][0])!;
    const ownerClient = createRunlaterClient(owner.url, { protocol, httpVersion: "2" });
    const direct = await dequeueLatency(ownerClient, latencyQueue, Math.floor(latencyJobs / 2));
    ownerClient.close();
    const forwarded = await dequeueLatency(admin, latencyQueue, Math.floor(latencyJobs / 2));
    figures = {
      brokers,
      enqueuePerS: (jobs / enqueueMs) * 1000,
      processedPerS: (jobs / run.ms) * 1000,
      processedMs: run.ms,
      succeeded: Number(q?.stats?.succeeded ?? 0),
      underLoad: run.dequeueMs,
      direct,
      forwarded,
      calls: run.calls,
      claimQueries: 0,
      emptyClaimQueries: 0,
      claimsByBroker: [],
      partitionsByBroker: [...perBroker].map(([name, n]) => `${name} ${n}`),
    };
  } finally {
    await admin.queues.deleteQueue({ name: queue }).catch(() => {});
    await admin.queues.deleteQueue({ name: latencyQueue }).catch(() => {});
    admin.close();
    await cluster.stop();
  }
  // Each broker logs its claim-query counts when it stops (whole run: both queues).
  for (const b of cluster.brokers) {
    const stopped = b.find("stopped")[0];
    if (stopped?.claimQueries === undefined) console.error(`${b.name}: no claim counts in its "stopped" log line`);
    figures.claimQueries += Number(stopped?.claimQueries ?? 0);
    figures.emptyClaimQueries += Number(stopped?.emptyClaimQueries ?? 0);
    figures.claimsByBroker.push(`${b.name} ${stopped?.claimQueries ?? "?"}/${stopped?.emptyClaimQueries ?? "?"}`);
  }
  return figures;
}

const emptyShare = (r: ClusterFigures) => `${((100 * r.emptyClaimQueries) / Math.max(1, r.claimQueries)).toFixed(1)} %`;

async function mainCluster(counts: number[]): Promise<void> {
  if (counts.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error("--brokers takes broker counts, e.g. --brokers 1,2,3");
  const stores = args.store as string[];
  if (stores.length === 0 || stores.some((s) => s === "memory"))
    throw new Error(
      "--brokers needs a shared store: --store redis://… or --store mysql://… (the memory store refuses --role broker)",
    );
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
  const pct = (xs: number[]) => `${percentile(xs, 50).toFixed(2)} / ${percentile(xs, 99).toFixed(2)} ms`;
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );
  console.log(
    `settings: store=${stores.join(",")} jobs=${jobs} payload=${payload.length}B enqueue-batch=${enqueueBatch}x${enqueueParallel} partitions=${args.partitions ?? 6} ` +
      `workers=${workers} (on ${args["workers-on"] === "frontend" ? "the frontend" : "the brokers, round-robin"}) concurrency=${concurrency} dequeue-batch=${workerDefaults ? "the Worker's default" : batch} dequeue-mode=${dequeueMode} protocol=${protocol} h2c buffer=${args["buffer-size"] ?? "default"}`,
  );
  const results: ClusterFigures[] = [];
  for (const n of counts) {
    const r = await runCluster(n);
    results.push(r);
    console.log(
      `brokers=${n} (partitions owned: ${r.partitionsByBroker.join(", ")}): enqueue ${fmt(r.enqueuePerS)} jobs/s, processed ${fmt(r.processedPerS)} jobs/s end to end (${fmt(r.processedMs)} ms; ${r.succeeded} SUCCEEDED); ` +
        `dequeue under load ${pct(r.underLoad)}; dequeue alone (100 jobs) from the owner's buffer ${pct(r.direct)}, through the frontend ${pct(r.forwarded)}; ` +
        `calls ${Object.entries(r.calls)
          .map(([k, v]) => `${k}=${v}`)
          .join(
            " ",
          )}; claim queries ${r.claimQueries}, empty ${r.emptyClaimQueries} (${emptyShare(r)}; ${r.claimsByBroker.join(", ")})`,
    );
    if (r.succeeded !== jobs) {
      console.error(`brokers=${n}: expected ${jobs} SUCCEEDED, server reports ${r.succeeded}`);
      process.exitCode = 1;
    }
  }
  const base = results[0]!.processedPerS;
  console.log(
    "\n| brokers | enqueue jobs/s | processed jobs/s | vs first | Dequeue under load p50 / p99 | Dequeue alone from the owner's buffer p50 / p99 | same through the frontend | empty claim queries |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const r of results) {
    console.log(
      `| ${r.brokers} | ${fmt(r.enqueuePerS)} | ${fmt(r.processedPerS)} | ${(r.processedPerS / base).toFixed(2)}× | ${pct(r.underLoad)} | ${pct(r.direct)} | ${pct(r.forwarded)} | ${r.emptyClaimQueries} of ${r.claimQueries} (${emptyShare(r)}) |`,
    );
  }
}

await (pickup ? runPickup(process.argv.slice(2)) : unary ? runUnary(process.argv.slice(2)) : main());
