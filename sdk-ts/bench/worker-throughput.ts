/**
 * No-op handler throughput of one TypeScript Worker at its defaults (or the options given),
 * against a running server: enqueues --jobs jobs into a fresh queue, starts the Worker,
 * and times it from start until the server counts every job SUCCEEDED. Prints one JSON
 * line per run. test/bench/workers.ts runs it next to the Python and Java ones.
 *
 *   npx tsx sdk-ts/bench/worker-throughput.ts --url http://127.0.0.1:8080 [--jobs 20000]
 *       [--runs 1] [--warmup 0] [--concurrency N] [--mode stream|poll] [--ack-delay-ms N]
 *       [--latency N]
 *
 * --latency N: instead, N jobs one at a time to an idle worker, each enqueued once the one
 * before has been handled; prints the median of finished_at − created_at (both the
 * server's times): how long a lone job takes from enqueue to its outcome applied.
 */
import { parseArgs } from "node:util";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createRunlaterClient, JobState, type RunlaterClient, Worker, type WorkerOptions } from "@runlater/sdk";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    jobs: { type: "string", default: "20000" },
    runs: { type: "string", default: "1" },
    warmup: { type: "string", default: "0" },
    concurrency: { type: "string" },
    mode: { type: "string" },
    "ack-delay-ms": { type: "string" },
    latency: { type: "string" },
  },
});
if (!args.url) throw new Error("--url is required (a running server)");
const url = args.url;

function options(client: RunlaterClient, queue: string, handler: () => void): WorkerOptions {
  // The defaults a user gets: createRunlaterClient(url) and new Worker({client, queue, handler}).
  const o: WorkerOptions = { client, queue, handler: async () => handler() };
  if (args.concurrency) o.concurrency = Number(args.concurrency);
  if (args.mode) o.dequeueMode = args.mode as "stream" | "poll";
  if (args["ack-delay-ms"]) o.ackDelayMs = Number(args["ack-delay-ms"]);
  return o;
}

/** Median milliseconds from enqueue to outcome applied of `n` lone jobs. */
async function latency(n: number): Promise<number> {
  const admin = createRunlaterClient(url);
  const queue = `bench_ts_${Math.random().toString(36).slice(2, 10)}`;
  await admin.createQueue(queue);
  const client = createRunlaterClient(url);
  let handled: () => void = () => {};
  const worker = new Worker(options(client, queue, () => handled()));
  await worker.start();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const done = new Promise<void>((resolve) => (handled = resolve));
    ids.push(await admin.enqueue(queue, "x"));
    await done;
    await new Promise((resolve) => setTimeout(resolve, 60)); // its outcome on its own, not with the next
  }
  await worker.stop();
  client.close();
  const { jobs } = await admin.jobs.getJobs({ jobIds: ids });
  const ms = jobs.map((j) => timestampMs(j.finishedAt!) - timestampMs(j.createdAt!)).sort((a, b) => a - b);
  await admin.queues.deleteQueue({ name: queue });
  admin.close();
  return ms[Math.floor(ms.length / 2)]!;
}

async function run(jobs: number): Promise<number> {
  const admin = createRunlaterClient(url);
  const queue = `bench_ts_${Math.random().toString(36).slice(2, 10)}`;
  await admin.createQueue(queue);
  for (let i = 0; i < jobs; i += 1000) {
    const n = Math.min(1000, jobs - i);
    await admin.enqueueMany(Array.from({ length: n }, () => ({ queue, body: "x" })));
  }
  const client = createRunlaterClient(url);
  let handled = 0;
  let allHandled!: () => void;
  const done = new Promise<void>((resolve) => (allHandled = resolve));
  const worker = new Worker(
    options(client, queue, () => {
      if (++handled === jobs) allHandled();
    }),
  );
  const t0 = performance.now();
  await worker.start();
  await done;
  // Done when the server has applied every outcome, not when the last handler returned.
  while (Number((await admin.jobs.countJobs({ queue, state: JobState.SUCCEEDED })).count) < jobs)
    await new Promise((resolve) => setTimeout(resolve, 5));
  const seconds = (performance.now() - t0) / 1000;
  await worker.stop();
  client.close();
  await admin.queues.deleteQueue({ name: queue });
  admin.close();
  return seconds;
}

if (Number(args.warmup) > 0) await run(Number(args.warmup));
if (args.latency) {
  const n = Number(args.latency);
  console.log(JSON.stringify({ sdk: "ts", jobs: n, latency_ms: await latency(n) }));
  process.exit(0);
}
for (let i = 0; i < Number(args.runs); i++) {
  const jobs = Number(args.jobs);
  const seconds = await run(jobs);
  console.log(JSON.stringify({ sdk: "ts", jobs, seconds, jobs_per_s: Math.round(jobs / seconds) }));
}
