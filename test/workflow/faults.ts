/**
 * Issue 24's fault test, with real processes: instances of the 5-job diamond (diamond.ts)
 * worked at once by the TypeScript SDK's Worker (in this process, one per queue) and the
 * Python SDK's Worker (python_worker.py, a child, every queue), while the deployment
 * suffers its faults (a server SIGKILLed and restarted on the same store and port, or a
 * cluster broker SIGKILLed). Then:
 *
 *   - every instance ended SUCCEEDED, every acknowledged start among them;
 *   - each job of each instance ran once, and its run was triggered by exactly one event
 *     per upstream job, posted by that job's run; no event is left in any input (a success
 *     posted twice would leave one, or run its downstream job twice);
 *   - every run's queue job was handed out, to a worker of either SDK (both took jobs);
 *   - a queue job handed out more than once (at-least-once: its claim expired without an
 *     ack, because a fault cut it or, on a busy machine, the ack came later than the
 *     claim timeout) was handed out again as a new attempt, and no sooner than the claim
 *     timeout after the hand-out before. Duplicates are counted and printed, with how many
 *     were first handed out within a claim timeout before a fault.
 *
 * faults.test.ts (SQLite), faults.redis.test.ts (Redis) and faults-cluster.redis.test.ts
 * (3 brokers + 1 frontend on Redis) run it. RUNLATER_FAULT_INSTANCES sets the instance
 * count (default 1,000). One such test at a time on this machine (the cluster tests' lock).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createRunlaterClient, type RunlaterClient, Worker } from "@runlater/sdk";
import { InstanceState } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { freePort } from "../../server/test/services.js";
import {
  exclusive,
  type NodeProcess,
  runDir,
  sleep,
  startCluster,
  startNode,
  stopAll,
  until,
} from "../cluster/harness.js";
import { pythonWithSdk } from "../python-sdk.js";
import {
  diamondDefinition,
  diamondViolations,
  JOBS,
  listInstances,
  mapLimit,
  QUEUES,
  type WorkflowClient,
  workflowClient,
} from "./diamond.js";

export const INSTANCES = Number(process.env.RUNLATER_FAULT_INSTANCES ?? 1_000);
export const CLAIM_TIMEOUT_MS = 2_000;
/** Handlers at once per queue, in each SDK's worker. */
const CONCURRENCY = 10;
/** StartInstance calls in flight. */
const STARTERS = 8;
/** Hand-outs are timed by the workers when their handler starts: allow for the trip and a busy event loop. */
const CLOCK_SLACK_MS = 500;
const WORKFLOW = "diamond";
/** The servers' log level (RUNLATER_FAULT_LOG_LEVEL=info or debug to see leases and claims). */
const LOG_LEVEL = process.env.RUNLATER_FAULT_LOG_LEVEL ?? "warn";

export interface Deployment {
  /** Where workers, starters and checks call: the server, or the cluster's frontend. */
  url: string;
  /** Partitions of each queue. */
  partitions: number;
  /** The faults to inject, in order, spread over the run; each resolves with what it did once the deployment serves again. */
  faults: Array<() => Promise<string>>;
  /** Recent server logs, for failure messages. */
  context(): string;
  /** Writes every server's full log under `dir`; returns `dir`. */
  dumpLogs(dir: string): string;
  stop(): Promise<void>;
}

/** Every hand-out to a worker of either SDK: job id → when (epoch ms), by which SDK, which attempt. */
class HandOuts {
  readonly byJob = new Map<string, Array<{ at: number; sdk: string; attempt: number }>>();
  readonly bySdk = new Map<string, number>();
  total = 0;

  add(jobId: string, sdk: string, attempt: number, at = Date.now()): void {
    const list = this.byJob.get(jobId) ?? [];
    list.push({ at, sdk, attempt });
    this.byJob.set(jobId, list);
    this.bySdk.set(sdk, (this.bySdk.get(sdk) ?? 0) + 1);
    this.total++;
  }

  /** Jobs handed out more than once, with the shortest time between two of their hand-outs. */
  duplicates(): Array<{ id: string; first: number; gapMs: number; attempts: number[]; sdks: string }> {
    return [...this.byJob]
      .filter(([, list]) => list.length > 1)
      .map(([id, unsorted]) => {
        const list = [...unsorted].sort((x, y) => x.at - y.at);
        let gapMs = Infinity;
        for (let i = 1; i < list.length; i++) gapMs = Math.min(gapMs, list[i]!.at - list[i - 1]!.at);
        const sdks = list.map((r) => `${r.sdk} attempt ${r.attempt} at ${r.at}`).join(", ");
        return { id, first: list[0]!.at, gapMs, attempts: list.map((r) => r.attempt), sdks };
      });
  }
}

/** python_worker.py in a child process, its hand-outs fed to `handOuts`. */
class PythonWorker {
  readonly stderr: string[] = [];
  private readonly child: ChildProcess;
  private readonly exited: Promise<void>;
  private ready = false;

  constructor(python: string, url: string, handOuts: HandOuts) {
    const script = fileURLToPath(new URL("./python_worker.py", import.meta.url));
    this.child = spawn(python, [script, url, QUEUES.join(","), String(CONCURRENCY)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.exited = new Promise((resolve) => this.child.once("exit", () => resolve()));
    let rest = "";
    this.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop()!;
      for (const line of lines) {
        if (line === "ready") this.ready = true;
        const [id, attempt, at] = line.split(" ");
        if (at !== undefined) handOuts.add(id!, "python", Number(attempt), Number(at));
      }
    });
    this.child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr.push(...chunk.split("\n").filter(Boolean));
      this.stderr.splice(0, Math.max(0, this.stderr.length - 30));
    });
  }

  async started(): Promise<void> {
    await until("the Python worker to start", 30_000, () => this.ready || this.child.exitCode !== null);
    if (!this.ready) throw new Error(`the Python worker exited:\n${this.stderr.join("\n")}`);
  }

  /** SIGTERM (a graceful stop), SIGKILL if it takes more than 10 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Starts instances, STARTERS calls at a time, until `want` starts were acknowledged; failed calls are counted (a call cut by a fault may still have started one). */
class Starter {
  readonly ids: string[] = [];
  failures = 0;
  lastError = "";
  private reserved = 0;
  readonly done: Promise<void>;

  constructor(wf: WorkflowClient, want: number) {
    this.done = Promise.all(
      Array.from({ length: STARTERS }, async () => {
        while (this.reserved < want) {
          this.reserved++;
          try {
            const { instance } = await wf.startInstance({ workflow: WORKFLOW });
            this.ids.push(instance!.instanceId);
          } catch (err) {
            this.reserved--;
            this.failures++;
            this.lastError = err instanceof Error ? err.message : String(err);
            await sleep(100);
          }
        }
      }),
    ).then(() => {});
  }
}

/** The suite: `deploy` makes a fresh deployment (a server or a cluster on a fresh store) for the one test. */
export function diamondFaultSuite(label: string, deploy: () => Promise<Deployment>): void {
  describe(`workflow diamond under faults on ${label} (real processes, TypeScript and Python workers)`, () => {
    let release: () => void = () => {};
    let python = "";
    let deployment: Deployment | undefined;
    const cleanups: Array<() => Promise<void> | void> = [];

    beforeAll(async () => {
      release = await exclusive("cluster-tests", 240_000);
      python = pythonWithSdk("test-venv", console.log);
    }, 300_000);

    afterAll(async () => {
      for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
      await deployment?.stop().catch(() => {});
      await stopAll();
      release();
    }, 60_000);

    it(`runs ${INSTANCES} diamonds to SUCCEEDED; every success posts its events once; duplicates only after the claim timeout`, async () => {
      const t0 = Date.now();
      const d = (deployment = await deploy());
      onTestFailed(() => {
        const dir = d.dumpLogs(`${runDir}workflow-faults/${label.replace(/\W+/g, "-")}-${Date.now()}`);
        console.error(`${d.context()}\n(full server logs in ${dir})`);
      });
      const client: RunlaterClient = createRunlaterClient(d.url, { timeoutMs: 5_000 });
      // The Workers' own client has no default deadline: it would cut their DequeueStreams,
      // and the jobs in flight on a cut stream go back to the queue.
      const workerClient = createRunlaterClient(d.url);
      const wf = workflowClient(d.url);
      cleanups.push(
        () => client.close(),
        () => workerClient.close(),
        () => wf.close(),
      );
      for (const queue of QUEUES)
        await client.createQueue(queue, {
          partitions: d.partitions,
          claimTimeoutMs: CLAIM_TIMEOUT_MS,
          retryPolicy: { initialDelayMs: 100, maxDelayMs: 100 },
        });
      await wf.applyWorkflow({ workflow: diamondDefinition(WORKFLOW) });

      const handOuts = new HandOuts();
      // What the TypeScript workers put up with (by call and error), and when each refused ack came back.
      const workerErrors = new Map<string, number>();
      const refusedAcks = new Map<string, number>();
      const workers = QUEUES.map(
        (queue) =>
          new Worker({
            client: workerClient,
            queue,
            concurrency: CONCURRENCY,
            shutdownGraceMs: 2_000,
            handler: async (job) => handOuts.add(job.id, "ts", job.attempt),
            onError: (err, ctx) => {
              const what = `${ctx.op}: ${String(err instanceof Error ? err.message : err)
                .replace(/ of job \S+/, "")
                .slice(0, 40)}`;
              workerErrors.set(what, (workerErrors.get(what) ?? 0) + 1);
              if (ctx.op === "ack" && ctx.jobId) refusedAcks.set(ctx.jobId, Date.now());
            },
          }),
      );
      await Promise.all(workers.map((w) => w.start()));
      cleanups.push(() => Promise.all(workers.map((w) => w.stop())).then(() => {}));
      const py = new PythonWorker(python, d.url, handOuts);
      cleanups.push(() => py.stop());
      await py.started();
      onTestFailed(() => console.error(`python worker stderr:\n${py.stderr.join("\n")}`));

      const starter = new Starter(wf, INSTANCES);
      const faults: string[] = [];
      const faultAt: number[] = [];
      const runs = JOBS.length * INSTANCES;
      for (const [k, fault] of d.faults.entries()) {
        const threshold = ((k + 1) * runs) / (d.faults.length + 1);
        await until(
          `${threshold} jobs handed out before fault ${k + 1}`,
          60_000,
          () => handOuts.byJob.size >= threshold,
          () => `${handOuts.byJob.size} handed out, ${starter.ids.length} started\n${d.context()}`,
        );
        const held = handOuts.byJob.size;
        faultAt.push(Date.now());
        faults.push(`${await fault()} after ${held} runs handed out`);
      }
      await starter.done;
      await until(
        "every instance to end",
        60_000,
        async () =>
          (await wf.listInstances({ workflow: WORKFLOW, state: InstanceState.RUNNING, limit: 1 })).instances.length ===
          0,
        () =>
          `${handOuts.byJob.size} runs handed out; start failures ${starter.failures} (${starter.lastError})\n${d.context()}`,
        250,
      );
      const elapsedMs = Date.now() - t0;
      await Promise.all(workers.map((w) => w.stop()));
      await py.stop();

      // Every instance ended SUCCEEDED, each acknowledged start among them; a start cut by a fault may have made one more.
      const instances = await listInstances(wf, WORKFLOW);
      const listed = new Set(instances.map((i) => i.instanceId));
      expect(starter.ids.filter((id) => !listed.has(id))).toEqual([]);
      expect(instances.length - starter.ids.length).toBeLessThanOrEqual(starter.failures);
      const full = await mapLimit(
        instances,
        16,
        async (i) => (await wf.getInstance({ instanceId: i.instanceId })).instance,
      );
      const violations = full.flatMap((inst, n) => diamondViolations(inst, instances[n]!.instanceId));
      expect(violations.slice(0, 20)).toEqual([]);

      // Every run's queue job was handed out, and only those.
      const runJobIds = new Set(full.flatMap((i) => i!.jobs.flatMap((j) => j.runs.map((r) => r.jobId))));
      expect(runJobIds.size).toBe(JOBS.length * instances.length);
      expect([...runJobIds].filter((id) => !handOuts.byJob.has(id)).slice(0, 10)).toEqual([]);
      expect([...handOuts.byJob.keys()].filter((id) => !runJobIds.has(id)).slice(0, 10)).toEqual([]);
      // Both SDKs took their share.
      expect(handOuts.bySdk.get("ts") ?? 0).toBeGreaterThan(0);
      expect(handOuts.bySdk.get("python") ?? 0).toBeGreaterThan(0);

      // At-least-once: a job is handed out again only once its claim expired, as a new attempt.
      const duplicates = handOuts.duplicates();
      const gaps = duplicates.map((x) => x.gapMs);
      const nearFault = duplicates.filter((dup) =>
        faultAt.some((at) => dup.first <= at && dup.first >= at - CLAIM_TIMEOUT_MS - CLOCK_SLACK_MS),
      ).length;
      const refusedAfter = duplicates
        .filter((dup) => refusedAcks.has(dup.id))
        .map((dup) => refusedAcks.get(dup.id)! - dup.first)
        .sort((x, y) => x - y);
      console.log(
        `[workflow faults, ${label}] ${instances.length} diamond instances (${starter.ids.length} acknowledged starts, ${starter.failures} failed start calls), all SUCCEEDED, ` +
          `${runJobIds.size} runs, each triggered once per upstream success; ${faults.join("; ")}; ` +
          `hand-outs ${handOuts.total} (ts ${handOuts.bySdk.get("ts") ?? 0}, python ${handOuts.bySdk.get("python") ?? 0}), ` +
          `duplicates ${duplicates.length}, ${nearFault} of them first handed out within a claim timeout before a fault (handed out again ${gaps.length ? `${Math.min(...gaps)}–${Math.max(...gaps)} ms` : "-"} after; claim timeout ${CLAIM_TIMEOUT_MS} ms; ` +
          `${refusedAfter.length} TypeScript acks of theirs refused, median ${refusedAfter[refusedAfter.length >> 1] ?? "-"} ms after the hand-out), ` +
          `TypeScript worker errors ${JSON.stringify(Object.fromEntries(workerErrors))}; run ${elapsedMs} ms, test ${Date.now() - t0} ms (logs: ${runDir})`,
      );
      for (const dup of duplicates) {
        expect(dup.gapMs, `${dup.id}: ${dup.sdks}`).toBeGreaterThanOrEqual(CLAIM_TIMEOUT_MS - CLOCK_SLACK_MS);
        expect(dup.attempts, `${dup.id}: ${dup.sdks}`).toEqual([...dup.attempts].sort((x, y) => x - y));
        expect(new Set(dup.attempts).size, `${dup.id}: ${dup.sdks}`).toBe(dup.attempts.length);
      }
    }, 240_000);
  });
}

/** One server on `store` at a fixed port, SIGKILLed twice and each time started again on the same store and port. */
export async function restartedServer(store: string): Promise<Deployment> {
  const port = await freePort();
  const servers: NodeProcess[] = [];
  const start = async () => {
    const node = await startNode({ name: `server-${servers.length + 1}`, store, port, logLevel: LOG_LEVEL });
    servers.push(node);
    return node;
  };
  let server = await start();
  const kill = async () => {
    const at = Date.now();
    await server.kill();
    server = await start();
    return `SIGKILL of the server, serving again ${Date.now() - at} ms later`;
  };
  return {
    url: server.url,
    partitions: 1,
    faults: [kill, kill],
    context: () => servers.map((s) => s.tail(15)).join("\n"),
    dumpLogs: (dir) => {
      mkdirSync(dir, { recursive: true });
      for (const s of servers)
        writeFileSync(
          join(dir, `${s.name}.log`),
          [...s.logs.map((l) => JSON.stringify(l)), ...s.rawStderr, ""].join("\n"),
        );
      return dir;
    },
    stop: () => server.stop(),
  };
}

/** 3 brokers + 1 frontend on `store` (lease TTL 1.5 s), each queue on 3 partitions; one broker SIGKILLed. */
export async function clusterWithBrokerKill(store: string): Promise<Deployment> {
  // Info at least: the cluster harness follows membership and partition ownership in the logs.
  const cluster = await startCluster({
    store,
    brokers: 3,
    frontends: 1,
    leaseTtlMs: 1_500,
    logLevel: process.env.RUNLATER_FAULT_LOG_LEVEL ?? "info",
  });
  return {
    url: cluster.frontend.url,
    partitions: 3,
    faults: [
      async () => {
        const victim = cluster.brokers[0]!;
        const owned = cluster.owned(victim).size;
        await victim.kill();
        return `SIGKILL of ${victim.name} (owning ${owned} partitions)`;
      },
    ],
    context: () => cluster.context(15),
    dumpLogs: (dir) => cluster.dumpLogs(dir),
    stop: () => cluster.stop(),
  };
}
