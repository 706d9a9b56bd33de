/**
 * The same workload as bench.ts on BullMQ, on the same Redis, for a side-by-side figure:
 * enqueue in batches (addBulk), then `workers` Workers with `concurrency` each run a
 * no-op processor until every job completed.
 */
import { Queue, Worker } from "bullmq";

export interface BullmqSettings {
  redisUrl: string;
  jobs: number;
  payloadBytes: number;
  enqueueBatch: number;
  enqueueParallel: number;
  workers: number;
  concurrency: number;
}

export interface BullmqResult {
  enqueueMs: number;
  processMs: number;
}

export async function runBullmq(s: BullmqSettings): Promise<BullmqResult> {
  const url = new URL(s.redisUrl);
  const connection = {
    host: url.hostname,
    port: Number(url.port || 6379),
    db: Number(url.pathname.slice(1) || 0),
    maxRetriesPerRequest: null,
  };
  const name = `bench_${Date.now()}`;
  const prefix = "bullbench";
  const queue = new Queue(name, { connection, prefix });
  // The same bytes as runlater's body; BullMQ stores job data as JSON, so send a string.
  const data = { body: "x".repeat(s.payloadBytes) };
  try {
    const enqueueStarted = performance.now();
    let next = 0;
    const producer = async () => {
      while (next < s.jobs) {
        const count = Math.min(s.enqueueBatch, s.jobs - next);
        next += count;
        await queue.addBulk(Array.from({ length: count }, () => ({ name: "job", data })));
      }
    };
    await Promise.all(Array.from({ length: s.enqueueParallel }, producer));
    const enqueueMs = performance.now() - enqueueStarted;

    let completed = 0;
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const processStarted = performance.now();
    const workers = Array.from({ length: s.workers }, () => {
      const w = new Worker(name, async () => undefined, { connection, prefix, concurrency: s.concurrency });
      w.on("completed", () => {
        if (++completed === s.jobs) resolveDone();
      });
      return w;
    });
    await done;
    const processMs = performance.now() - processStarted;
    await Promise.all(workers.map((w) => w.close()));
    return { enqueueMs, processMs };
  } finally {
    await queue.obliterate({ force: true }).catch(() => {});
    await queue.close();
  }
}
