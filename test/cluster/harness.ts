/**
 * Real runlater server processes for cluster tests and the cluster benchmark: each node is
 * `node server/bin/runlater.js serve --port 0 …` in its own process, its URL read from the
 * "runlater listening on <url>" line on stdout, its pino JSON log lines (stderr) kept in
 * memory and searchable. Nodes can be SIGKILLed, paused (SIGSTOP), resumed (SIGCONT) and
 * stopped (SIGTERM, then SIGKILL if it hangs).
 *
 * Nothing is left behind: every process started here is killed when the test process
 * exits (an exit handler) or when `stopAll()` runs (call it in afterAll), and each server
 * also kills itself when its parent disappears (parent-watch.mjs, preloaded).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";

const bin = fileURLToPath(new URL("../../server/bin/runlater.js", import.meta.url));
const parentWatch = fileURLToPath(new URL("./parent-watch.mjs", import.meta.url));
export const runDir = fileURLToPath(new URL("../../.run/", import.meta.url));

export type Role = "all" | "frontend" | "broker";

/** One parsed pino line, plus when this process received it. */
export interface LogLine {
  level: number;
  /** pino's timestamp (epoch ms, the server's clock = this machine's). */
  time: number;
  msg: string;
  [field: string]: unknown;
}

export interface NodeOptions {
  /** Label used in messages, e.g. "broker-2". */
  name: string;
  /** Store URL(s) (`--store`, repeated). */
  store: string | string[];
  /** `--port`; default 0 (a free one). A fixed port lets clients find a restarted server again. */
  port?: number;
  /** `--role`; omitted from the command line when unset (the server's default is all). */
  role?: Role;
  /** `--lease-ttl` in ms; omitted when unset. */
  leaseTtlMs?: number;
  bufferSize?: number;
  logLevel?: string;
  /** More `serve` flags. */
  args?: string[];
  /** Flags for node itself (before the script), e.g. --cpu-prof. */
  nodeArgs?: string[];
  /** How long to wait for the listening line (default 20 s). */
  startTimeoutMs?: number;
}

const everyChild = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of everyChild) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

export class NodeProcess {
  readonly logs: LogLine[] = [];
  /** stderr lines that were not JSON (stack traces of a crash, tsx errors). */
  readonly rawStderr: string[] = [];
  url = "";
  readonly startedAt = Date.now();
  /** Set while SIGSTOPped. */
  paused = false;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderrRest = "";
  private stdoutSeen = "";
  private readonly logWaiters = new Set<() => void>();

  constructor(
    readonly options: NodeOptions,
    readonly child: ChildProcess,
  ) {
    everyChild.add(child);
    this.exited = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        everyChild.delete(child);
        this.wake();
        resolve({ code, signal });
      }),
    );
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => this.onStderr(chunk));
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      if (this.stdoutSeen.length < 10_000) this.stdoutSeen += chunk;
      this.wake();
    });
  }

  get name(): string {
    return this.options.name;
  }
  get role(): Role {
    return this.options.role ?? "all";
  }
  get pid(): number {
    return this.child.pid!;
  }
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the URL once the server printed its listening line. */
  async ready(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = /runlater listening on (\S+)/.exec(this.stdoutSeen);
      if (match) return (this.url = match[1]!);
      if (!this.alive)
        throw new Error(
          `${this.name} exited before listening (${this.child.exitCode ?? this.child.signalCode})\n${this.tail(30)}`,
        );
      if (Date.now() > deadline)
        throw new Error(`${this.name} did not print its listening line within ${timeoutMs} ms\n${this.tail(30)}`);
      await this.nextOutput(deadline - Date.now());
    }
  }

  /** Log lines whose msg is `msg` and whose fields include `fields` (compared with ===). */
  find(msg: string, fields: Record<string, unknown> = {}, since = 0): LogLine[] {
    return this.logs.filter(
      (l) => l.msg === msg && l.time >= since && Object.entries(fields).every(([k, v]) => l[k] === v),
    );
  }

  /** Waits for a log line like `find` would return; throws with context at the deadline. */
  async waitForLog(
    msg: string,
    fields: Record<string, unknown> = {},
    o: { since?: number; timeoutMs?: number } = {},
  ): Promise<LogLine> {
    const deadline = Date.now() + (o.timeoutMs ?? 10_000);
    for (;;) {
      const found = this.find(msg, fields, o.since ?? 0)[0];
      if (found) return found;
      if (Date.now() > deadline)
        throw new Error(
          `${this.name}: no log "${msg}" ${JSON.stringify(fields)} within ${o.timeoutMs ?? 10_000} ms\n${this.tail(30)}`,
        );
      await this.nextOutput(Math.min(200, deadline - Date.now()));
    }
  }

  /** The last `n` log lines (raw stderr included), for failure messages. */
  tail(n = 20): string {
    const lines = [...this.logs.map((l) => JSON.stringify(l)), ...this.rawStderr].slice(-n);
    const state = this.alive
      ? this.paused
        ? "paused"
        : "running"
      : `exited ${this.child.exitCode ?? this.child.signalCode}`;
    return `--- ${this.name} (${this.role}, pid ${this.child.pid}, ${this.url || "no url"}, ${state}), last ${lines.length} log lines:\n${lines.join("\n")}`;
  }

  /** SIGKILL; resolves once the process is gone. */
  async kill(): Promise<void> {
    if (this.alive) this.child.kill("SIGKILL");
    await this.exited;
  }

  /** SIGSTOP: the process freezes (timers, sockets, leases) until resume(). */
  pause(): void {
    this.child.kill("SIGSTOP");
    this.paused = true;
  }

  /** SIGCONT. */
  resume(): void {
    this.child.kill("SIGCONT");
    this.paused = false;
  }

  /** SIGTERM and wait for the exit; SIGKILL after `graceMs`. */
  async stop(graceMs = 5_000): Promise<void> {
    if (!this.alive) return;
    if (this.paused) this.resume();
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  private onStderr(chunk: string): void {
    const text = this.stderrRest + chunk;
    const lines = text.split("\n");
    this.stderrRest = lines.pop()!;
    for (const line of lines) {
      if (line.trim() === "") continue;
      try {
        const parsed = JSON.parse(line) as LogLine;
        if (typeof parsed === "object" && parsed !== null && typeof parsed.msg === "string") this.logs.push(parsed);
        else this.rawStderr.push(line);
      } catch {
        this.rawStderr.push(line);
      }
    }
    this.wake();
  }

  private wake(): void {
    for (const w of this.logWaiters) w();
    this.logWaiters.clear();
  }

  private nextOutput(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.logWaiters.add(done);
    });
  }
}

/** Starts one server process and waits until it listens. */
export async function startNode(o: NodeOptions): Promise<NodeProcess> {
  const stores = Array.isArray(o.store) ? o.store : [o.store];
  const args = [
    ...(o.nodeArgs ?? []),
    "--import",
    parentWatch,
    bin,
    "serve",
    "--port",
    String(o.port ?? 0),
    "--log-level",
    o.logLevel ?? "info",
    ...stores.flatMap((s) => ["--store", s]),
    ...(o.role ? ["--role", o.role] : []),
    ...(o.leaseTtlMs !== undefined ? ["--lease-ttl", String(o.leaseTtlMs)] : []),
    ...(o.bufferSize !== undefined ? ["--buffer-size", String(o.bufferSize)] : []),
    ...(o.args ?? []),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  const node = new NodeProcess(o, child);
  try {
    await node.ready(o.startTimeoutMs ?? 20_000);
  } catch (err) {
    await node.kill();
    throw err;
  }
  return node;
}

export interface ClusterOptions {
  store: string | string[];
  brokers: number;
  frontends?: number;
  leaseTtlMs?: number;
  bufferSize?: number;
  logLevel?: string;
  /** More `serve` flags for every node. */
  args?: string[];
  nodeArgs?: string[];
}

export class Cluster {
  readonly frontends: NodeProcess[] = [];
  /** Every broker started, dead ones included (in start order). */
  readonly brokers: NodeProcess[] = [];

  constructor(readonly options: ClusterOptions) {}

  get nodes(): NodeProcess[] {
    return [...this.frontends, ...this.brokers];
  }
  get liveBrokers(): NodeProcess[] {
    return this.brokers.filter((b) => b.alive);
  }
  /** The first frontend (the URL producers use). */
  get frontend(): NodeProcess {
    return this.frontends[0]!;
  }

  private started = { broker: 0, frontend: 0 };

  /** Starts one more broker (named broker-N in start order). */
  async addBroker(): Promise<NodeProcess> {
    const node = await startNode(this.nodeOptions(`broker-${++this.started.broker}`, "broker"));
    this.brokers.push(node);
    return node;
  }

  async addFrontend(): Promise<NodeProcess> {
    const node = await startNode(this.nodeOptions(`frontend-${++this.started.frontend}`, "frontend"));
    this.frontends.push(node);
    return node;
  }

  /** Partitions ("queue/partition") the node owns according to its own log so far. */
  owned(node: NodeProcess, queue?: string): Set<string> {
    const owned = new Set<string>();
    for (const l of node.logs) {
      if (queue !== undefined && l.queue !== queue) continue;
      const key = `${l.queue}/${l.partition}`;
      if (l.msg === "partition acquired") owned.add(key);
      else if (l.msg === "partition released" || l.msg === "lease lost") owned.delete(key);
    }
    return owned;
  }

  /** Every "partition acquired" line of every broker, with the broker's name. */
  acquisitions(queue?: string): Array<LogLine & { node: string }> {
    return this.brokers.flatMap((b) =>
      b.find("partition acquired", queue === undefined ? {} : { queue }).map((l) => ({ ...l, node: b.name })),
    );
  }

  /** "queue/partition" → name of the live broker that owns it, per the brokers' logs so far. */
  owners(queue?: string): Map<string, string> {
    const owners = new Map<string, string>();
    for (const b of this.liveBrokers) for (const key of this.owned(b, queue)) owners.set(key, b.name);
    return owners;
  }

  /** Waits until the live brokers together own every partition of `queue`. */
  async waitForOwners(queue: string, partitions: number, timeoutMs: number): Promise<Map<string, string>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const owners = this.owners(queue);
      if (owners.size >= partitions) return owners;
      if (Date.now() > deadline)
        throw new Error(
          `only ${owners.size}/${partitions} partitions of ${queue} owned after ${timeoutMs} ms: ${JSON.stringify([...owners])}\n${this.context()}`,
        );
      await sleep(50);
    }
  }

  /**
   * Waits until every live node's latest "brokers changed" log line lists exactly the live
   * brokers (by URL).
   */
  async waitForMembership(timeoutMs: number): Promise<void> {
    const live = () => new Set(this.liveBrokers.map((b) => b.url));
    const view = (n: NodeProcess) => {
      const last = n.find("brokers changed").at(-1);
      return new Set(((last?.brokers as Array<{ url: string }> | undefined) ?? []).map((b) => b.url));
    };
    await until(
      "every node to see the live brokers",
      timeoutMs,
      () => {
        const want = live();
        return this.nodes
          .filter((n) => n.alive)
          .every((n) => {
            const seen = view(n);
            return seen.size === want.size && [...want].every((u) => seen.has(u));
          });
      },
      () => this.context(),
      50,
    );
  }

  /** Writes every node's full log (JSON lines, then raw stderr) to `dir`/<node>.log; returns `dir`. */
  dumpLogs(dir: string): string {
    mkdirSync(dir, { recursive: true });
    for (const n of this.nodes)
      writeFileSync(`${dir}/${n.name}.log`, [...n.logs.map((l) => JSON.stringify(l)), ...n.rawStderr, ""].join("\n"));
    return dir;
  }

  /** The last log lines of every node, for failure messages. */
  context(lines = 15): string {
    return this.nodes.map((n) => n.tail(lines)).join("\n");
  }

  /** Stops every node (SIGTERM, SIGKILL after a grace); never throws. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop(3_000).catch(() => n.kill())));
  }

  private nodeOptions(name: string, role: Role): NodeOptions {
    const o = this.options;
    return {
      name,
      role,
      store: o.store,
      leaseTtlMs: o.leaseTtlMs,
      bufferSize: o.bufferSize,
      logLevel: o.logLevel,
      args: o.args,
      nodeArgs: o.nodeArgs,
    };
  }
}

/**
 * Starts `brokers` brokers, then `frontends` frontends (default 1), and waits until every
 * node's view of the registry lists exactly the live brokers (nodes re-read it every
 * lease-ttl/3; until then a frontend may answer Dequeue with NO_BROKER).
 */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const cluster = new Cluster(o);
  clusters.add(cluster);
  try {
    // allSettled, not all: when one node fails to start, the others' starts must finish (and
    // the nodes join the cluster) before stop(), or a node ready a moment later would run on,
    // registered, into the next test.
    await settledAll(Array.from({ length: o.brokers }, () => cluster.addBroker()));
    await settledAll(Array.from({ length: o.frontends ?? 1 }, () => cluster.addFrontend()));
    await cluster.waitForMembership((o.leaseTtlMs ?? 10_000) + 5_000);
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

const clusters = new Set<Cluster>();

/** Waits for every promise; then throws the first rejection, if any. */
async function settledAll<T>(promises: Array<Promise<T>>): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** Stops every cluster started in this process; for afterAll. */
export async function stopAll(): Promise<void> {
  const all = [...clusters];
  clusters.clear();
  await Promise.all(all.map((c) => c.stop()));
  for (const child of everyChild) child.kill("SIGKILL");
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it returns a value other than undefined/false, or throws at the deadline with `context()`. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  context?: () => string,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError
        ? ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`
        : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}${context ? `\n${context()}` : ""}`);
    }
    await sleep(everyMs);
  }
}

/**
 * A Redis database of the test Redis for one test file, emptied before use and by
 * `dispose()`. The server takes no key prefix on its command line, so isolation is by
 * database number; numbers in use: 15 conformance/run.sh, 1–3 store shard tests (random
 * prefixes), 13 failover.redis.test.ts, 12 left for the cluster bench default, 11 and 10
 * test/workflow's fault tests, 9 and 8 the workflow bench (runlater, BullMQ).
 */
export async function freshRedisDb(
  baseUrl: string,
  db: number,
): Promise<{ url: string; dispose: () => Promise<void> }> {
  const url = `${baseUrl.replace(/\/\d*$/, "")}/${db}`;
  const flush = async () => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await client.connect();
      await client.flushdb();
    } finally {
      client.disconnect();
    }
  };
  await flush();
  return { url, dispose: flush };
}

/**
 * Keeps the cluster test files of one machine from running at the same time (vitest runs
 * files in parallel): two clusters of four processes each on a 2-core box starve each
 * other's lease renewals and make timing assertions meaningless. A lock directory under
 * .run/ holding the owner's pid; a lock whose owner is dead is taken over.
 */
export async function exclusive(name: string, timeoutMs: number): Promise<() => void> {
  const dir = `${runDir}${name}.lock`;
  mkdirSync(runDir, { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(`${dir}/pid`, String(process.pid));
      const release = () => rmSync(dir, { recursive: true, force: true });
      process.once("exit", release);
      return release;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      let owner = 0;
      try {
        owner = Number(readFileSync(`${dir}/pid`, "utf8"));
      } catch {
        // being written or removed right now
      }
      if (owner > 0 && !processExists(owner)) rmSync(dir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`lock ${dir} held by pid ${owner} for more than ${timeoutMs} ms`);
      await sleep(200);
    }
  }
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
