/**
 * Who used the cores during a benchmark phase: CPU time of the server process, the
 * store's server (Redis or MariaDB, when it runs on this machine) and the bench process
 * itself (producer and workers), read from /proc (Linux) before and after the phase.
 * Threads are included; forked children (Redis's AOF rewrite) are not.
 */
import { readFileSync } from "node:fs";
import { Cluster, Redis } from "ioredis";
import mysql from "mysql2/promise";
import { parseClusterUrl } from "../../server/src/store/redis/cluster.js";

/** Linux's USER_HZ: /proc reports CPU time in these ticks. */
const TICKS_PER_SECOND = 100;

/** CPU time (user + system, ms) of a process, or undefined if /proc cannot tell. */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, inside parentheses).
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

const local = (host: string) => host === "127.0.0.1" || host === "localhost" || host === "::1";

/** The pid of the store's server if it runs on this machine (Redis: INFO; MariaDB/MySQL: its pid file). */
export async function storePid(storeUrl: string | undefined): Promise<number | undefined> {
  if (!storeUrl) return undefined;
  const url = new URL(storeUrl);
  if (!local(url.hostname)) return undefined;
  try {
    if (url.protocol === "redis:") {
      const client = new Redis(storeUrl, { lazyConnect: true });
      await client.connect();
      const info = await client.info("server");
      client.disconnect();
      return Number(/process_id:(\d+)/.exec(info)?.[1]) || undefined;
    }
    if (url.protocol === "mysql:") {
      const conn = await mysql.createConnection(storeUrl);
      const [rows] = (await conn.query("SELECT @@pid_file AS f")) as unknown as [Array<{ f: string }>];
      await conn.end();
      return Number(readFileSync(rows[0]!.f, "utf8").trim()) || undefined;
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/**
 * The store's server processes on this machine by name, for CpuMeter: the one of storePid
 * under the URL's scheme, or each master of a Redis Cluster (redis+cluster://, the nodes
 * that take the writes) as redis-master-1, -2, ….
 */
export async function storePids(storeUrl: string): Promise<Record<string, number | undefined>> {
  const scheme = storeUrl.split(":")[0]!;
  if (scheme !== "redis+cluster") return { [scheme]: await storePid(storeUrl) };
  const seeds = parseClusterUrl(storeUrl).nodes;
  if (!seeds.every((n) => local(n.host))) return {};
  const cluster = new Cluster(seeds, { lazyConnect: true });
  try {
    await cluster.connect();
    const pids: Record<string, number | undefined> = {};
    for (const [i, node] of cluster.nodes("master").entries())
      pids[`redis-master-${i + 1}`] = Number(/process_id:(\d+)/.exec(await node.info("server"))?.[1]) || undefined;
    return pids;
  } finally {
    cluster.disconnect();
  }
}

/** "server 12.3 µs/job (41 % of a core), …": what CpuMeter.measure gave. */
export function formatUsage(used: Array<{ name: string; usPerUnit: number; coreShare: number }>, unit: string): string {
  return used
    .map((p) => `${p.name} ${p.usPerUnit.toFixed(1)} µs/${unit} (${Math.round(100 * p.coreShare)} % of a core)`)
    .join(", ");
}

/** CPU used by each named process between start() and stop(). */
export class CpuMeter {
  private before = new Map<string, number>();
  private startedAt = 0;

  constructor(private readonly pids: Record<string, number | undefined>) {}

  start(): void {
    this.startedAt = performance.now();
    this.before = this.read();
  }

  /** "server 12.3 µs/job (41 % of a core), …" for `jobs` jobs (or other `unit`s) over the phase. */
  stop(jobs: number, unit = "job"): string {
    return formatUsage(this.measure(jobs), unit);
  }

  /** Each process's CPU since start(): µs per one of `units` (jobs, flows), and its share of a core. */
  measure(units: number): Array<{ name: string; usPerUnit: number; coreShare: number }> {
    const wallMs = performance.now() - this.startedAt;
    return [...this.read()].map(([name, ms]) => {
      const used = ms - (this.before.get(name) ?? ms);
      return { name, usPerUnit: (used * 1000) / units, coreShare: used / wallMs };
    });
  }

  private read(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [name, pid] of Object.entries(this.pids)) {
      const ms = pid === undefined ? undefined : cpuMsOf(pid);
      if (ms !== undefined) out.set(name, ms);
    }
    const self = process.cpuUsage();
    out.set("bench", (self.user + self.system) / 1000);
    return out;
  }
}
