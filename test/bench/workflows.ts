/**
 * Workflow benchmark (issue 24): the 5-job diamond (a → b, c, d → e, test/workflow/diamond.ts)
 * on runlater's memory and Redis stores, next to BullMQ Flows on the same Redis.
 *
 *   npm run bench:workflows -- [--rounds 3] [--instances 2000] [--concurrency 50]
 *       [--starters 16] [--stores memory,redis] [--no-bullmq] [--json out.json]
 *
 * The BullMQ side: a FlowProducer flow whose parent (e) waits on 4 children (a, b, c, d).
 * BullMQ flows are trees (a job has at most one parent), so the diamond's fan-out after a
 * cannot be written: this is the closest flow with the same 5 jobs and the same fan-in,
 * and it does less: 4 edges and 2 jobs on its critical path against the diamond's 6 edges
 * and 3 jobs.
 *
 * Equal settings on both sides: one queue per job, one Worker per queue in this process
 * with --concurrency handlers each and a no-op handler; --starters calls in flight
 * starting instances (runlater: the README's client, client.startInstance; BullMQ
 * FlowProducer.add; one instance per call).
 *
 * Per round, each system in turn (the order turns every round), on a fresh workflow name
 * or queue prefix:
 *   1. peak: --instances instances started as fast as the starters go; completed flows per
 *      second = instances / (the last instance's end − the first start), the end from the
 *      system's own timestamps (runlater: the instance's ended_at; BullMQ: the parent's
 *      finishedOn);
 *   2. half load: --instances / 2 instances started at half the peak rate this round
 *      measured for that system, evenly spaced; the edge latency percentiles come from here.
 * Edge latency, upstream ACK → downstream job handed to its handler: runlater, the handler's
 * start minus the posted_at of the newest event that triggered the run (posted by the
 * upstream run's ACK step), so 4 edges per instance (a→b, a→c, a→d, and the last of b, c, d
 * → e); BullMQ, the parent's processor start minus the newest finishedOn of its children
 * (1 edge per flow). Both clocks are this machine's.
 *
 * The table gives each figure's median over the rounds and the ratio runlater/BullMQ of each
 * round's pair. Other work on the machine moves every figure: the load average is printed.
 * Figures belong in docs/benchmarks.md with the machine and these settings. Never run in CI.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { createRunlaterClient, Worker as RunlaterWorker } from "@runlater/sdk";
import { InstanceState, WorkflowSchema } from "@runlater/sdk/gen/workflow_service_pb.js";
import { Worker as BullWorker, FlowProducer } from "bullmq";
import { redisUrl } from "../../server/test/services.js";
import { freshRedisDb, type NodeProcess, startNode } from "../cluster/harness.js";
import { diamondDefinition, JOBS, listInstances, QUEUES } from "../workflow/diamond.js";
import { CpuMeter, storePids } from "./cpu.js";

const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    instances: { type: "string", default: "2000" },
    concurrency: { type: "string", default: "50" },
    starters: { type: "string", default: "16" },
    stores: { type: "string", default: "memory,redis" },
    "no-bullmq": { type: "boolean", default: false },
    json: { type: "string" },
  },
});
const rounds = Number(args.rounds);
const instances = Number(args.instances);
const concurrency = Number(args.concurrency);
const starters = Number(args.starters);
const log = (s: string) => process.stdout.write(`${s}\n`);

interface Pass {
  flowsPerSec: number;
  /** Edge latencies, ms. */
  edges: number[];
}
interface Result {
  peak: Pass;
  half: Pass & { rate: number };
}
interface System {
  name: string;
  /** The processes whose CPU a pass is charged: the runlater server, the Redis it uses. */
  pids: Record<string, number | undefined>;
  /** Runs `count` instances, started at most `rate` per second (Infinity: as fast as the starters go). */
  pass(label: string, count: number, rate: number): Promise<Pass>;
  close(): Promise<void>;
}

/** Starts `count` things with `starters` calls in flight, no faster than `rate` per second; returns when the first started. */
async function startAll(count: number, rate: number, start: () => Promise<unknown>): Promise<number> {
  const t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(starters, count) }, async () => {
      while (next < count) {
        const i = next++;
        const due = t0 + (i * 1000) / rate;
        if (Number.isFinite(due) && due > Date.now()) await sleep(due - Date.now());
        await start();
      }
    }),
  );
  return t0;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function runlaterSystem(name: string, store: string): Promise<System> {
  const server: NodeProcess = await startNode({
    name,
    store,
    logLevel: "warn",
    // The same knobs as the other benches' servers (test/bench/server-process.ts).
    nodeArgs: (process.env.BENCH_SERVER_NODE_FLAGS ?? "").split(" ").filter(Boolean),
    args: (process.env.BENCH_SERVER_ARGS ?? "").split(" ").filter(Boolean),
  });
  // No default deadline: it would cut the Workers' DequeueStreams (the jobs in flight on a cut stream go back to the queue).
  // The README's client does everything, StartInstance included (client.startInstance).
  const client = createRunlaterClient(server.url);
  for (const queue of QUEUES) await client.createQueue(queue);
  return {
    name,
    pids: { server: server.pid, ...(store.startsWith("redis") ? await storePids(store) : {}) },
    async pass(label, count, rate) {
      const workflow = `${label}_${name}`;
      await client.applyWorkflow(create(WorkflowSchema, diamondDefinition(workflow)));
      const edges: number[] = [];
      let ended = 0;
      let allEnded!: () => void;
      const done = new Promise<void>((r) => (allEnded = r));
      const workers = QUEUES.map(
        (queue) =>
          new RunlaterWorker({
            client,
            queue,
            concurrency,
            handler: async (job) => {
              const at = Date.now();
              const events = job.workflow?.triggeredBy ?? [];
              if (events.length > 0) edges.push(at - Math.max(...events.map((e) => timestampMs(e.postedAt!))));
              if (queue === QUEUES.at(-1) && ++ended === count) allEnded();
            },
          }),
      );
      await Promise.all(workers.map((w) => w.start()));
      const t0 = await startAll(count, rate, () => client.startInstance(workflow));
      await done;
      // The last handler ran; its ACK ends the instance a moment later. Asking for one
      // running instance is cheap; listing them all every time would take the server's
      // time from those last ACKs.
      const running = { workflow, state: InstanceState.RUNNING, limit: 1 };
      while ((await client.workflows.listInstances(running)).instances.length > 0) {
        await sleep(20);
      }
      const listed = await listInstances(client.workflows, workflow);
      await Promise.all(workers.map((w) => w.stop()));
      const end = Math.max(...listed.map((i) => timestampMs(i.endedAt!)));
      return { flowsPerSec: (count * 1000) / (end - t0), edges };
    },
    async close() {
      client.close();
      await server.stop();
    },
  };
}

async function bullmqSystem(url: string): Promise<System> {
  const parsed = new URL(url);
  const connection = {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    db: Number(parsed.pathname.slice(1) || 0),
    maxRetriesPerRequest: null,
  };
  const flows = new FlowProducer({ connection });
  return {
    name: "bullmq",
    pids: await storePids(url),
    async pass(label, count, rate) {
      const prefix = `bullwf_${label}`;
      const queueOf = (job: string) => `flow_${job}`;
      /** parent key → newest finishedOn of its children so far. */
      const childrenDone = new Map<string, number>();
      const parentStart = new Map<string, number>();
      let lastEnd = 0;
      let ended = 0;
      let allEnded!: () => void;
      const done = new Promise<void>((r) => (allEnded = r));
      const workers = JOBS.map((job) => {
        const w = new BullWorker(
          queueOf(job),
          async (j) => {
            if (job === "e") parentStart.set(`${prefix}:${queueOf("e")}:${j.id}`, Date.now());
          },
          { connection, prefix, concurrency },
        );
        w.on("completed", (j) => {
          if (job !== "e") {
            const key = j.parentKey!;
            childrenDone.set(key, Math.max(childrenDone.get(key) ?? 0, j.finishedOn!));
          } else {
            lastEnd = Math.max(lastEnd, j.finishedOn!);
            if (++ended === count) allEnded();
          }
        });
        return w;
      });
      await Promise.all(workers.map((w) => w.waitUntilReady()));
      const data = {};
      const t0 = await startAll(count, rate, () =>
        flows.add({
          name: "e",
          queueName: queueOf("e"),
          prefix,
          data,
          children: ["a", "b", "c", "d"].map((job) => ({ name: job, queueName: queueOf(job), prefix, data })),
        }),
      );
      await done;
      await Promise.all(workers.map((w) => w.close()));
      const edges = [...parentStart].map(([key, at]) => at - childrenDone.get(key)!);
      return { flowsPerSec: (count * 1000) / (lastEnd - t0), edges };
    },
    async close() {
      await flows.close();
    },
  };
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}
const median = (values: number[]) => pct(values, 50);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(" ");

async function main(): Promise<void> {
  const base = redisUrl();
  const runlaterDb = await freshRedisDb(base, 9);
  const bullDb = await freshRedisDb(base, 8);
  const stores = args.stores!.split(",").filter(Boolean);
  const systems: System[] = [];
  for (const s of stores) systems.push(await runlaterSystem(s, s === "redis" ? runlaterDb.url : s));
  if (!args["no-bullmq"]) systems.push(await bullmqSystem(bullDb.url));
  log(
    `diamond workflows: ${rounds} rounds × ${instances} instances (peak) + ${instances / 2} (half load); ` +
      `${QUEUES.length} queues × 1 worker × concurrency ${concurrency}; ${starters} starters; load average ${load()}`,
  );
  const results = new Map<string, Result[]>(systems.map((s) => [s.name, []]));
  try {
    for (const s of systems) await s.pass("warmup", 200, Number.POSITIVE_INFINITY);
    for (let r = 0; r < rounds; r++) {
      const order = systems.map((_, i) => systems[(i + r) % systems.length]!);
      for (const s of order) {
        const before = load();
        const cpu = new CpuMeter(s.pids);
        cpu.start();
        const peak = await s.pass(`r${r}peak`, instances, Number.POSITIVE_INFINITY);
        const cpuPerFlow = cpu.stop(instances, "flow");
        const rate = peak.flowsPerSec / 2;
        const half = await s.pass(`r${r}half`, Math.round(instances / 2), rate);
        results.get(s.name)!.push({ peak, half: { ...half, rate } });
        log(
          `round ${r + 1} ${s.name.padEnd(7)} peak ${peak.flowsPerSec.toFixed(0).padStart(5)} flows/s (edges p50 ${pct(peak.edges, 50)} ms, p99 ${pct(peak.edges, 99)} ms); ` +
            `at ${rate.toFixed(0)}/s: ${half.flowsPerSec.toFixed(0)} flows/s, edges p50 ${pct(half.edges, 50)} ms, p99 ${pct(half.edges, 99)} ms ` +
            `(${half.edges.length} edges); load ${before} → ${load()}\n  peak pass CPU: ${cpuPerFlow}`,
        );
      }
    }
  } finally {
    for (const s of systems) await s.close().catch(() => {});
    await runlaterDb.dispose().catch(() => {});
    await bullDb.dispose().catch(() => {});
  }

  log("\nmedians over the rounds:");
  log("system   peak flows/s   half-load rate   edge p50   edge p99   (peak pass: edge p50 / p99)");
  const summary: Record<string, unknown> = {};
  for (const [name, rs] of results) {
    const row = {
      peakFlowsPerSec: median(rs.map((x) => x.peak.flowsPerSec)),
      halfRate: median(rs.map((x) => x.half.rate)),
      halfEdgeP50: median(rs.map((x) => pct(x.half.edges, 50))),
      halfEdgeP99: median(rs.map((x) => pct(x.half.edges, 99))),
      peakEdgeP50: median(rs.map((x) => pct(x.peak.edges, 50))),
      peakEdgeP99: median(rs.map((x) => pct(x.peak.edges, 99))),
    };
    summary[name] = row;
    log(
      `${name.padEnd(8)} ${row.peakFlowsPerSec.toFixed(0).padStart(12)} ${row.halfRate.toFixed(0).padStart(16)} ` +
        `${String(row.halfEdgeP50).padStart(8)} ms ${String(row.halfEdgeP99).padStart(7)} ms   (${row.peakEdgeP50} / ${row.peakEdgeP99} ms)`,
    );
  }
  const bull = results.get("bullmq");
  if (bull)
    for (const [name, rs] of results) {
      if (name === "bullmq") continue;
      const ratios = rs.map((x, i) => x.peak.flowsPerSec / bull[i]!.peak.flowsPerSec);
      summary[`${name}/bullmq`] = ratios;
      log(
        `${name}/bullmq peak flows/s, per round: ${ratios.map((x) => x.toFixed(2)).join(", ")} (median ${median(ratios).toFixed(2)})`,
      );
    }
  log(`load average at the end: ${load()}`);
  if (args.json) {
    const perRound = Object.fromEntries(
      [...results].map(([name, rs]) => [
        name,
        rs.map((x) => ({
          peakFlowsPerSec: x.peak.flowsPerSec,
          halfRate: x.half.rate,
          halfEdgeP50: pct(x.half.edges, 50),
          halfEdgeP99: pct(x.half.edges, 99),
        })),
      ]),
    );
    writeFileSync(args.json, `${JSON.stringify({ settings: args, summary, rounds: perRound }, null, 1)}\n`);
  }
}

await main();
process.exit(0);
