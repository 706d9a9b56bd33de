/**
 * Pickup latency (issue 28): jobs enqueued one per Enqueue call at a fixed rate while the
 * workers sit idle in long poll; for each job, the time from the Enqueue's answer to its
 * handler's start, both read from this process's monotonic clock (so a job can start
 * before its Enqueue answer arrives: a negative figure).
 *
 *   npm run bench -- --pickup [--store URL]... [--rate 2000] [--seconds 10] [--warmup-seconds 2]
 *                    [--dequeue-mode stream,poll] [--workers 2] [--cold-jobs 100]
 *                    [--producer-http 1.1|2]  (the producer's HTTP version; default the client's)
 *                    [--max-outstanding 1000]  (Enqueue calls unanswered at once, at most: past it the
 *                                          producer falls behind the rate, and says so, instead of
 *                                          piling up calls the server refuses, NGHTTP2_ENHANCE_YOUR_CALM)
 *                    [--baseline-bin PATH] [--rounds N]  (also run another build of the server,
 *                                          alternating with this one, N rounds of each)
 *
 * Each run starts a fresh server, so its first --cold-jobs jobs are the cold-server figure;
 * the warm figures leave out every job enqueued in the first --warmup-seconds.
 */
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { createRunlaterClient, Worker } from "@runlater/sdk";
import { CpuMeter, storePids } from "./cpu.js";
import { percentile, startServerProcess } from "./server-process.js";

interface Settings {
  rate: number;
  seconds: number;
  warmupSeconds: number;
  workers: number;
  coldJobs: number;
  producerHttp: "1.1" | "2" | undefined;
  maxOutstanding: number;
}

interface RunFigures {
  /** ms from Enqueue answer to handler start, of the jobs after the warm-up, ascending. */
  warm: number[];
  /** The same, of the first coldJobs jobs. */
  cold: number[];
  /** ms of the Enqueue calls after the warm-up, ascending. */
  enqueue: number[];
  /** The rate actually reached (the producer can fall behind on a busy machine). */
  sentPerS: number;
  missing: number;
  /** CPU per job of the server, the store's server and this process, from the first Enqueue to the last job's start. */
  cpu: string;
}

export async function runPickup(argv: string[]): Promise<void> {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      pickup: { type: "boolean" },
      store: { type: "string", multiple: true, default: [] },
      rate: { type: "string", default: "2000" },
      seconds: { type: "string", default: "10" },
      "warmup-seconds": { type: "string", default: "2" },
      "dequeue-mode": { type: "string", default: "stream,poll" },
      workers: { type: "string", default: "2" },
      "cold-jobs": { type: "string", default: "100" },
      "producer-http": { type: "string" },
      "max-outstanding": { type: "string", default: "1000" },
      "baseline-bin": { type: "string" },
      rounds: { type: "string", default: "1" },
    },
  });
  const stores = (args.store as string[]).length > 0 ? (args.store as string[]) : ["memory"];
  const modes = args["dequeue-mode"].split(",") as Array<"stream" | "poll">;
  if (modes.some((m) => m !== "stream" && m !== "poll")) throw new Error("--dequeue-mode takes stream, poll or both");
  const producerHttp = args["producer-http"];
  if (producerHttp !== undefined && producerHttp !== "1.1" && producerHttp !== "2")
    throw new Error("--producer-http is 1.1 or 2");
  const s: Settings = {
    rate: Number(args.rate),
    seconds: Number(args.seconds),
    warmupSeconds: Number(args["warmup-seconds"]),
    workers: Number(args.workers),
    coldJobs: Number(args["cold-jobs"]),
    producerHttp,
    maxOutstanding: Number(args["max-outstanding"]),
  };
  if (!Number.isSafeInteger(s.maxOutstanding) || s.maxOutstanding < 1)
    throw new Error("--max-outstanding is a whole number of calls, at least 1");
  const builds: Array<[string, string | undefined]> = [["this build", undefined]];
  if (args["baseline-bin"]) builds.unshift(["baseline", args["baseline-bin"]]);
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );
  console.log(
    `settings: rate=${s.rate}/s, one job per Enqueue, ${s.seconds} s per run (first ${s.warmupSeconds} s excluded as warm-up), ` +
      `workers=${s.workers} (default concurrency), producer HTTP ${producerHttp ?? "client default"}, cold = first ${s.coldJobs} jobs after the server started`,
  );
  const ms = (n: number) => n.toFixed(1);
  const pct = (xs: number[]) =>
    `p50 ${ms(percentile(xs, 50))}  p90 ${ms(percentile(xs, 90))}  p99 ${ms(percentile(xs, 99))}  max ${ms(xs.at(-1) ?? 0)}`;
  for (const store of stores)
    for (const mode of modes)
      for (let round = 1; round <= Number(args.rounds); round++)
        for (const [name, bin] of builds) {
          const before = loadavg()[0]!;
          const r = await pickupRun(store, mode, s, bin);
          console.log(
            `${store} ${mode} ${name}${Number(args.rounds) > 1 ? ` round ${round}` : ""}: warm ${pct(r.warm)} ms over ${r.warm.length} jobs; ` +
              `cold ${pct(r.cold)} ms; enqueue call p50 ${ms(percentile(r.enqueue, 50))} p99 ${ms(percentile(r.enqueue, 99))} ms; ` +
              `${Math.round(r.sentPerS)} jobs/s sent${r.missing > 0 ? `, ${r.missing} NOT HANDLED` : ""}; load ${before.toFixed(1)}→${loadavg()[0]!.toFixed(1)}\n` +
              `  CPU per job: ${r.cpu}`,
          );
          if (r.missing > 0) process.exitCode = 1;
        }
}

async function pickupRun(
  store: string,
  mode: "stream" | "poll",
  s: Settings,
  bin: string | undefined,
): Promise<RunFigures> {
  const server = await startServerProcess([store], [], bin);
  const producer = createRunlaterClient(server.url, { httpVersion: s.producerHttp });
  const queue = `pickup_${Date.now()}`;
  const total = Math.round(s.rate * s.seconds);
  const answeredAt = new Map<string, number>();
  const startedAt = new Map<string, number>();
  let allStarted!: () => void;
  const done = new Promise<void>((resolve) => (allStarted = resolve));
  const workers: Worker[] = [];
  try {
    await producer.createQueue(queue);
    for (let i = 0; i < s.workers; i++) {
      // The stream worker streams on the default client's HTTP/2; the polling one long-polls Dequeue over HTTP/1.1.
      const client = createRunlaterClient(server.url, mode === "stream" ? {} : { httpVersion: "1.1" });
      workers.push(
        new Worker({
          client,
          queue,
          dequeueMode: mode,
          onError: (err, ctx) => console.error("worker error", ctx, err),
          handler: async (job) => {
            startedAt.set(job.id, performance.now());
            if (startedAt.size === total) allStarted();
          },
        }),
      );
    }
    await Promise.all(workers.map((w) => w.start()));
    // Let every worker's first long poll (or stream) reach the server: idle, waiting.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const cpu = new CpuMeter({ server: server.pid, ...(store.includes("://") ? await storePids(store) : {}) });
    cpu.start();
    const { sent, enqueueMs, ms } = await enqueueAtRate(producer, queue, total, s, answeredAt);
    const timeout = setTimeout(allStarted, 10_000); // a lost job must not hang the bench
    await done;
    const cpuPerJob = cpu.stop(total);
    clearTimeout(timeout);
    const warmFrom = Math.round(s.rate * s.warmupSeconds);
    const latency = (ids: string[]) =>
      ids
        .filter((id) => startedAt.has(id))
        .map((id) => startedAt.get(id)! - answeredAt.get(id)!)
        .sort((a, b) => a - b);
    return {
      warm: latency(sent.slice(warmFrom)),
      cold: latency(sent.slice(0, s.coldJobs)),
      enqueue: enqueueMs.slice(warmFrom).sort((a, b) => a - b),
      sentPerS: (sent.length / ms) * 1000,
      missing: sent.filter((id) => !startedAt.has(id)).length,
      cpu: cpuPerJob,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await producer.queues.deleteQueue({ name: queue }).catch(() => {});
    producer.close();
    await server.stop();
  }
}

/**
 * Open loop: every millisecond, sends the Enqueue calls the rate says are due by now,
 * without waiting for earlier answers (but with at most s.maxOutstanding unanswered).
 * Returns the ids in the order they were sent.
 */
async function enqueueAtRate(
  client: ReturnType<typeof createRunlaterClient>,
  queue: string,
  total: number,
  s: Settings,
  answeredAt: Map<string, number>,
): Promise<{ sent: string[]; enqueueMs: number[]; ms: number }> {
  const body = new Uint8Array(200).fill(120);
  const ids: Array<Promise<string>> = [];
  const enqueueMs: number[] = [];
  let answered = 0;
  const start = performance.now();
  while (ids.length < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) * s.rate) / 1000) + 1);
    while (ids.length < due && ids.length - answered < s.maxOutstanding) {
      const i = ids.length;
      const t = performance.now();
      ids.push(
        client.enqueue(queue, body).then((id) => {
          const now = performance.now();
          answered++;
          answeredAt.set(id, now);
          enqueueMs[i] = now - t;
          return id;
        }),
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const ms = performance.now() - start;
  return { sent: await Promise.all(ids), enqueueMs, ms };
}
