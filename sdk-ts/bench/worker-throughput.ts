/**
 * No-op handler throughput of one TypeScript Worker at its defaults (or the options given),
 * against a running server: enqueues --jobs jobs into a fresh queue, starts the Worker,
 * and times it from start until the server counts every job SUCCEEDED. Prints one JSON
 * line per run. test/bench/workers.ts runs it next to the Python and Java ones.
 *
 *   npx tsx sdk-ts/bench/worker-throughput.ts --url http://127.0.0.1:8080 [--jobs 20000]
 *       [--runs 1] [--warmup 0] [--concurrency N] [--mode stream|poll] [--ack-delay-ms N]
 */
import { parseArgs } from "node:util";
import { createRunlaterClient, JobState, Worker, type WorkerOptions } from "@runlater/sdk";

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    jobs: { type: "string", default: "20000" },
    runs: { type: "string", default: "1" },
    warmup: { type: "string", default: "0" },
    concurrency: { type: "string" },
    mode: { type: "string" },
    "ack-delay-ms": { type: "string" },
  },
});
if (!args.url) throw new Error("--url is required (a running server)");
const url = args.url;

async function run(jobs: number): Promise<number> {
  const admin = createRunlaterClient(url);
  const queue = `bench_ts_${Math.random().toString(36).slice(2, 10)}`;
  await admin.createQueue(queue);
  for (let i = 0; i < jobs; i += 1000) {
    const n = Math.min(1000, jobs - i);
    await admin.enqueueMany(Array.from({ length: n }, () => ({ queue, body: "x" })));
  }
  // The defaults a user gets: createRunlaterClient(url) and new Worker({client, queue, handler}).
  const client = createRunlaterClient(url);
  let handled = 0;
  let allHandled!: () => void;
  const done = new Promise<void>((resolve) => (allHandled = resolve));
  const options: WorkerOptions = {
    client,
    queue,
    handler: async () => {
      if (++handled === jobs) allHandled();
    },
  };
  if (args.concurrency) options.concurrency = Number(args.concurrency);
  if (args.mode) options.dequeueMode = args.mode as "stream" | "poll";
  if (args["ack-delay-ms"]) options.ackDelayMs = Number(args["ack-delay-ms"]);
  const worker = new Worker(options);
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
for (let i = 0; i < Number(args.runs); i++) {
  const jobs = Number(args.jobs);
  const seconds = await run(jobs);
  console.log(JSON.stringify({ sdk: "ts", jobs, seconds, jobs_per_s: Math.round(jobs / seconds) }));
}
