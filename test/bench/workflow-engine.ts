/**
 * The workflow engine alone (issue 24): diamond flows (a → b, c, d → e) through the Engine
 * and a store in this process, with no HTTP, no Connect and no Worker. Each round starts
 * --flows instances, then hands out and acknowledges each queue's jobs in batches of
 * --batch, queue after queue. Prints this process's CPU per flow (engine, domain and the
 * store's client) and, on Redis, the Redis server's, per round and the median over
 * --rounds. The server's figure in `npm run bench:workflows` minus this one is what the
 * transport (HTTP/2, Connect, protobuf, the Workers' streams) adds.
 *
 *   npx tsx test/bench/workflow-engine.ts [--stores memory,redis] [--flows 3000] [--batch 5]
 *       [--rounds 5]
 *
 * Redis: database 7 of RUNLATER_TEST_REDIS_URL, flushed first. Never run in CI.
 */
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { Broker } from "../../server/src/broker/broker.js";
import { ManualClock } from "../../server/src/domain/clock.js";
import { Engine } from "../../server/src/engine/engine.js";
import { silentLogger } from "../../server/src/log.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { openRedisStore } from "../../server/src/store/redis/redis-store.js";
import type { Store } from "../../server/src/store/store.js";
import { redisUrl } from "../../server/test/services.js";
import { JOBS, UPSTREAM } from "../workflow/diamond.js";
import { CpuMeter, formatUsage, storePids } from "./cpu.js";
import { percentile } from "./server-process.js";

const { values: args } = parseArgs({
  options: {
    stores: { type: "string", default: "memory,redis" },
    flows: { type: "string", default: "3000" },
    batch: { type: "string", default: "5" },
    rounds: { type: "string", default: "5" },
  },
});
const flows = Number(args.flows);
const batch = Number(args.batch);
const rounds = Number(args.rounds);

async function openStore(kind: string): Promise<{ store: Store; pids: Record<string, number | undefined> }> {
  if (kind === "memory") return { store: new MemoryStore(), pids: {} };
  const url = `${redisUrl().replace(/\/\d*$/, "")}/7`;
  const admin = new Redis(url);
  await admin.flushdb();
  admin.disconnect();
  return { store: await openRedisStore({ urls: [url], prefix: "wfe" }), pids: await storePids(url) };
}

async function bench(kind: string): Promise<void> {
  const { store, pids } = await openStore(kind);
  const clock = new ManualClock();
  const broker = new Broker({ store, clock, log: silentLogger, owner: "bench", bufferSize: 100, leaseTtlMs: 60_000 });
  const engine = new Engine({ store, broker, clock });
  broker.start();
  const queue = (job: string) => `wfe_${job}`;
  for (const job of JOBS) await engine.createQueue(queue(job), {});
  await engine.workflows.apply({
    name: "wfe",
    jobs: JOBS.map((job) => ({
      name: job,
      queue: queue(job),
      inputs: UPSTREAM[job].map((from) => ({ job: from })),
      onFailure: "abort" as const,
      body: new TextEncoder().encode(job),
      priority: 0,
      attemptsAllowed: 0,
    })),
  });
  const run = async (n: number) => {
    const started = [];
    for (let i = 0; i < n; i++) started.push(engine.workflows.start({ workflow: "wfe", events: [], keepOpen: false }));
    await Promise.all(started);
    for (const job of JOBS) {
      for (;;) {
        const got = await engine.dequeue({ queue: queue(job), limit: batch, waitMs: 0, dryRun: false });
        if (got.jobs.length === 0) break;
        const succeeded = got.jobs.map((j) => ({ jobId: j.id, claimToken: j.claimToken, customStatus: "" }));
        await engine.ack({ queue: queue(job), succeeded, failed: [] });
      }
    }
  };
  await run(Math.min(flows, 500)); // warm-up
  const perRound: Array<Map<string, number>> = [];
  for (let r = 1; r <= rounds; r++) {
    const meter = new CpuMeter(pids);
    meter.start();
    await run(flows);
    const used = meter.measure(flows);
    perRound.push(new Map(used.map((p) => [p.name, p.usPerUnit])));
    process.stdout.write(`${kind} round ${r}: ${formatUsage(used, "flow")}\n`);
  }
  const medians = [...perRound[0]!.keys()].map((name) => {
    const values = perRound.map((m) => m.get(name)!).sort((a, b) => a - b);
    return `${name} ${percentile(values, 50).toFixed(0)} µs/flow`;
  });
  process.stdout.write(`${kind} median: ${medians.join(", ")}\n`);
  await broker.stop();
  await store.close();
}

process.stdout.write(`workflow engine alone: ${flows} diamond flows a round, batches of ${batch}, ${rounds} rounds\n`);
for (const kind of args.stores.split(",")) await bench(kind);
process.exit(0);
