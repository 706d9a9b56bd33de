/**
 * Per-operation cost of the MySQL store (insert, claim, start, complete) on batches of
 * 100 and 1000 jobs, one caller, as the broker drives it (one claim token per start
 * batch): wall time per job seen by the server. With --statements, also each SQL
 * statement's share of a round (mysql2 calls wrapped with timers; "COMMIT" and "START
 * TRANSACTION" included), so the cost of each round trip shows.
 * With --server-pid (a local mariadbd's pid), also the CPU time the database server's
 * threads spent during each operation (schedstat, background threads included).
 *   RUNLATER_TEST_MYSQL_URL=mysql://root@127.0.0.1:3306/x npx tsx test/bench/mysql-ops.ts [--statements] [--rounds N] [--server-pid PID]
 * OPS_BATCHES=100,500,2000 sets the batch sizes (default 100,1000); OPS_MAX_BYTES=N bounds
 * each claim in body bytes, as the broker's --buffer-bytes does.
 * Always under `flock /tmp/runlater-bench.lock` on a shared machine. Uses (and drops) its
 * own database next to the URL's.
 */
import { readdirSync, readFileSync } from "node:fs";
import mysql, { createConnection } from "mysql2/promise";
import { newJobId } from "../../server/src/domain/job-id.js";
import { resolveQueueConfig } from "../../server/src/domain/queue-config.js";
import { openMysqlStore } from "../../server/src/store/mysql/mysql-store.js";
import { parseMysqlUrl } from "../../server/src/store/mysql/shard.js";

const base = process.env.RUNLATER_TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/runlater_test";
const args = process.argv.slice(2);
const statements = args.includes("--statements");
const rounds = Number(args[args.indexOf("--rounds") + 1] ?? 0) || 20;
/** A local mariadbd/mysqld's pid: also print the CPU time its threads spent per operation. */
const serverPid = args.includes("--server-pid") ? Number(args[args.indexOf("--server-pid") + 1]) : undefined;
const database = `rl_ops_${process.pid}`;
const url = base.replace(/\/[^/]*$/, `/${database}`);

// Statement timers: mysql2's promise connection methods, keyed by the statement's shape.
const spent = new Map<string, { ms: number; calls: number }>();
let timing = false;
if (statements) {
  const proto = (
    mysql as unknown as { PromiseConnection: { prototype: Record<string, (...a: unknown[]) => Promise<unknown>> } }
  ).PromiseConnection.prototype;
  for (const method of ["query", "execute"]) {
    const original = proto[method]!;
    proto[method] = async function (this: unknown, ...a: unknown[]) {
      const t = performance.now();
      try {
        return await original.apply(this, a);
      } finally {
        if (timing) {
          const key = shape(String(typeof a[0] === "string" ? a[0] : (a[0] as { sql: string }).sql));
          const s = spent.get(key) ?? { ms: 0, calls: 0 };
          s.ms += performance.now() - t;
          s.calls++;
          spent.set(key, s);
        }
      }
    };
  }
}

function shape(sql: string): string {
  return sql
    .replace(/\?(, \?)+/g, "?…")
    .replace(/(WHEN \?… THEN \?… ?)+|(WHEN \? THEN \? ?)+/g, "WHEN…")
    .replace(/\((\?…|\?)\)(, \((\?…|\?)\))+/g, "(…)…")
    .replace(/SELECT (\w+, ){5,}\w+/, "SELECT <columns>")
    .slice(0, 110);
}

const store = await openMysqlStore([url]);
const q = "ops";
let now = Date.now();
await store.queueCreate({ name: q, config: resolveQueueConfig({}), now });
const lease = (await store.leaseAcquire({ queue: q, partition: 0, owner: "o", ttlMs: 600_000, now }))!;
const body = new Uint8Array(200);

/** Nanoseconds on CPU of every thread of the database server (background threads included). */
function serverCpuNs(): number {
  if (serverPid === undefined) return 0;
  let ns = 0;
  for (const task of readdirSync(`/proc/${serverPid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${serverPid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended
    }
  }
  return ns;
}

type Op = "insert" | "claim" | "start" | "complete";
const serverMs: Record<Op, number> = { insert: 0, claim: 0, start: 0, complete: 0 };
async function round(B: number, totals: Record<Op, number>) {
  now++;
  const jobs = Array.from({ length: B }, () => ({
    id: newJobId(q, 0, now),
    queue: q,
    partition: 0,
    priority: 1,
    body,
    runAfter: now,
    attemptsAllowed: 3,
    customStatus: "",
    createdAt: now,
    idempotencyKey: "",
    orderingKey: "",
  }));
  const time = async <T>(op: Op, f: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    const cpu = serverCpuNs();
    const r = await f();
    totals[op] += performance.now() - t;
    serverMs[op] += (serverCpuNs() - cpu) / 1e6;
    return r;
  };
  await time("insert", () => store.jobInsertMany({ jobs, now }));
  const claimed = await time("claim", () =>
    store.jobClaimMany({
      queue: q,
      partition: 0,
      epoch: lease.epoch,
      limit: B,
      maxBytes: process.env.OPS_MAX_BYTES ? Number(process.env.OPS_MAX_BYTES) : undefined,
      now,
    }),
  );
  const token = `t${now}`;
  const plans = claimed.map((j) => ({ id: j.id, claimToken: token, claimExpiresAt: now + 60_000, retryDelayMs: 1000 }));
  const started = await time("start", () =>
    store.jobStartMany({ queue: q, partition: 0, epoch: lease.epoch, plans, now }),
  );
  const acked = await time("complete", () =>
    store.jobCompleteMany({ items: started.map((id) => ({ id, claimToken: token, customStatus: "" })), now }),
  );
  if (started.length !== B || acked.some((r) => r.outcome !== "acknowledged"))
    throw new Error(
      `round of ${B}: started ${started.length}, acked ${acked.filter((r) => r.outcome === "acknowledged").length}`,
    );
}

try {
  for (const B of (process.env.OPS_BATCHES ?? "100,1000").split(",").map(Number)) {
    const n = B === 100 ? rounds : Math.max(3, Math.round(rounds / 5));
    const warm: Record<Op, number> = { insert: 0, claim: 0, start: 0, complete: 0 };
    for (let i = 0; i < 3; i++) await round(B, warm);
    const totals: Record<Op, number> = { insert: 0, claim: 0, start: 0, complete: 0 };
    spent.clear();
    for (const op of Object.keys(serverMs) as Op[]) serverMs[op] = 0;
    timing = true;
    const t = performance.now();
    for (let i = 0; i < n; i++) await round(B, totals);
    const wall = performance.now() - t;
    timing = false;
    const perJob = (ms: number) => ((ms * 1000) / (n * B)).toFixed(1).padStart(6);
    console.log(
      `\n${B}-job batches, ${n} rounds: ${(wall / n).toFixed(2)} ms per round, ${perJob(wall)} µs/job over the four operations`,
    );
    for (const op of Object.keys(totals) as Op[]) {
      const server = serverPid === undefined ? "" : `, database server CPU ${perJob(serverMs[op])} µs/job`;
      console.log(
        `  ${op.padEnd(9)} ${perJob(totals[op])} µs/job  (${(totals[op] / n).toFixed(2)} ms per call)${server}`,
      );
    }
    if (statements) {
      console.log("  statements (ms per round, calls per round):");
      for (const [key, s] of [...spent].sort((a, b) => b[1].ms - a[1].ms)) {
        console.log(`    ${(s.ms / n).toFixed(2).padStart(6)} ms  ${(s.calls / n).toFixed(1).padStart(4)}×  ${key}`);
      }
    }
  }
} finally {
  await store.close();
  const { database: _, ...settings } = parseMysqlUrl(base);
  const admin = await createConnection(settings);
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.end();
}
