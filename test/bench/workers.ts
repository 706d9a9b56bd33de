/**
 * Worker throughput of each SDK at its defaults, side by side, and Python next to Celery.
 *
 *   npm run bench:workers -- [--rounds 5] [--jobs 20000] [--sdk ts,python,java]
 *       [--python-async] [--celery] [--celery-jobs 5000] [--json out.json]
 *       [--concurrency 10,100] [--mode stream,poll] [--ack-delay-ms 0,5,50]   (sweeps)
 *       [--latency 50]
 *
 * One runlater server on the memory store; per round, each SDK's own bench program runs one
 * default worker (no options) with a no-op handler over --jobs jobs, timed from the worker's
 * start until the server counts every job SUCCEEDED (sdk-ts/bench/worker-throughput.ts,
 * sdk-python/bench/worker_throughput.py, sdk-java WorkerBench; each after an untimed warm-up
 * run, 20,000 jobs for the JVM's JIT, 2,000 for the others). The order of the SDKs turns
 * every round, so a machine that gets busier does not favour one; the table gives each one's
 * median and range. Other work on the machine moves every figure: compare within one run.
 *
 * --celery: the same Python worker against a second runlater server on the Redis store, and
 * Celery's default worker (prefork, one process per core) on the same Redis, alternating
 * with the rest; Celery is installed from PyPI into a temporary venv now (never in CI) and
 * measured by sdk-python/bench/celery_noop.py. Redis comes from scripts/services.sh.
 *
 * --concurrency, --mode, --ack-delay-ms: instead of the defaults, run each SDK once per
 * value (each list may have one value, to change one setting): how docs/workers.md's
 * defaults were chosen. --latency N: instead of throughput, each run sends N jobs one at a
 * time to an idle worker and reports the median ms from enqueue to outcome applied (the
 * server's created_at and finished_at).
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { pythonWithSdk } from "../python-sdk.js";
import { startServerProcess } from "./server-process.js";

const root = join(import.meta.dirname, "../..");
const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "5" },
    jobs: { type: "string", default: "20000" },
    sdk: { type: "string", default: "ts,python,java" },
    "python-async": { type: "boolean", default: false },
    celery: { type: "boolean", default: false },
    "celery-jobs": { type: "string", default: "5000" },
    json: { type: "string" },
    concurrency: { type: "string" },
    mode: { type: "string" },
    "ack-delay-ms": { type: "string" },
    latency: { type: "string" },
  },
});
/** What each run reports: jobs/s, or with --latency the median ms of a lone job. */
const metric = args.latency ? "latency_ms" : "jobs_per_s";
const latencyFlags = args.latency ? ["--latency", args.latency] : [];
const rounds = Number(args.rounds);
const jobs = Number(args.jobs);
const log = (s: string) => process.stdout.write(`${s}\n`);

/** Runs a bench program; returns the metric of the JSON line it prints last. */
function runBench(argv: string[], cwd = root): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.once("exit", (code) => {
      const line = out
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .pop();
      if (code !== 0 || !line) return reject(new Error(`${argv.join(" ")} exited with ${code}\n${out}\n${err}`));
      resolve(Math.round((JSON.parse(line) as Record<string, number>)[metric]!));
    });
  });
}

/** The Java bench's command line, after compiling it with the SDK's own build. */
function javaBench(): string[] {
  log("building the Java bench (mvn test-compile)");
  const mvn = (...a: string[]) =>
    execFileSync("mvn", ["-B", "-q", "-Dstyle.color=never", ...a], { cwd: join(root, "sdk-java"), stdio: "inherit" });
  mvn("test-compile");
  mvn("dependency:build-classpath", "-Dmdep.includeScope=test", "-Dmdep.outputFile=target/bench-classpath.txt");
  const dir = join(root, "sdk-java/target");
  const cp = [join(dir, "test-classes"), join(dir, "classes"), readFileSync(join(dir, "bench-classpath.txt"), "utf8")];
  return ["java", "-cp", cp.join(":").trim(), "dev.runlater.bench.WorkerBench"];
}

function redisUrl(): string {
  const exports = execFileSync("bash", [join(root, "scripts/services.sh"), "redis"], { encoding: "utf8" });
  const m = /RUNLATER_TEST_REDIS_URL=['"]?(redis:\/\/[^\s'"]+)/.exec(exports);
  if (!m) throw new Error(`scripts/services.sh redis printed no RUNLATER_TEST_REDIS_URL:\n${exports}`);
  return m[1]!.replace(/\/$/, "");
}

interface Entry {
  name: string;
  run: () => Promise<number>;
  rates: number[];
}

/** The settings to run each SDK with: the defaults, or every combination of the sweeps given. */
function variants(): Array<{ label: string; flags: string[] }> {
  let out = [{ label: "", flags: [] as string[] }];
  const sweep = (flag: string, values: string | undefined, label: (v: string) => string) => {
    if (!values) return;
    out = out.flatMap((o) =>
      values.split(",").map((v) => ({ label: `${o.label}, ${label(v)}`, flags: [...o.flags, `--${flag}`, v] })),
    );
  };
  out = out.map((o) => ({ ...o, flags: [...o.flags, ...latencyFlags] }));
  sweep("concurrency", args.concurrency, (v) => `concurrency ${v}`);
  sweep("mode", args.mode, (v) => v);
  sweep("ack-delay-ms", args["ack-delay-ms"], (v) => `ack delay ${v} ms`);
  return out;
}

async function main(): Promise<void> {
  const sdks = args.sdk.split(",").filter(Boolean);
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    const memory = await startServerProcess(["memory"]);
    cleanups.push(() => memory.stop());
    const entries: Entry[] = [];
    const add = (name: string, run: () => Promise<number>) => entries.push({ name, run, rates: [] });
    const tsx = [process.execPath, join(root, "node_modules/tsx/dist/cli.mjs")];
    /** What every runlater bench program takes: the server, the jobs, one timed run after a warm-up. */
    const common = (url: string, warmup: number) => [
      "--url",
      url,
      "--jobs",
      `${jobs}`,
      "--warmup",
      `${warmup}`,
      "--runs",
      "1",
    ];
    const sweeps = variants();
    if (sdks.includes("ts"))
      for (const v of sweeps)
        add(`TypeScript (memory${v.label})`, () =>
          runBench([...tsx, join(root, "sdk-ts/bench/worker-throughput.ts"), ...common(memory.url, 2000), ...v.flags]),
        );
    const python = sdks.includes("python") || args.celery ? pythonWithSdk("bench-venv", log) : "";
    const pyBench = (url: string, handler = "sync", flags: string[] = []) => [
      python,
      join(root, "sdk-python/bench/worker_throughput.py"),
      ...common(url, 2000),
      "--handler",
      handler,
      "--json",
      ...flags,
    ];
    for (const v of sweeps) {
      if (sdks.includes("python"))
        add(`Python (memory${v.label})`, () => runBench(pyBench(memory.url, "sync", v.flags)));
      if (sdks.includes("python") && args["python-async"])
        add(`Python, async def handler (memory${v.label})`, () => runBench(pyBench(memory.url, "async", v.flags)));
    }
    if (sdks.includes("java")) {
      const java = javaBench();
      for (const v of sweeps)
        add(`Java (memory${v.label})`, () => runBench([...java, ...common(memory.url, 20_000), ...v.flags]));
    }
    if (args.celery) {
      const redis = redisUrl();
      const onRedis = await startServerProcess([`${redis}/13`]);
      cleanups.push(() => onRedis.stop());
      const venv = mkdtempSync(join(tmpdir(), "celery-venv-"));
      cleanups.push(() => rmSync(venv, { recursive: true, force: true }));
      log(`installing Celery 5.7.0 (Redis transport) into ${venv}`);
      execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
      execFileSync(join(venv, "bin/python"), ["-m", "pip", "install", "--quiet", "celery[redis]==5.7.0"], {
        stdio: "inherit",
      });
      add("Python (Redis store)", () => runBench(pyBench(onRedis.url)));
      add("Celery 5.7.0, default worker (Redis broker)", () =>
        runBench([
          join(venv, "bin/python"),
          join(root, "sdk-python/bench/celery_noop.py"),
          "--broker",
          `${redis}/14`,
          "--jobs",
          args["celery-jobs"],
          "--json",
        ]),
      );
    }
    log(
      `${rounds} rounds, ${jobs} no-op jobs per runlater run, each SDK's Worker at its defaults${sweeps.length > 1 || sweeps[0]!.label ? " but for the settings named" : ""}`,
    );
    for (let r = 0; r < rounds; r++) {
      // Turn the order every round: each entry runs first, second, … in turn.
      const order = entries.map((_, i) => entries[(i + r) % entries.length]!);
      const line: string[] = [];
      for (const e of order) {
        const rate = await e.run();
        e.rates.push(rate);
        line.push(`${e.name} ${rate}`);
      }
      log(`round ${r + 1}: ${line.join(", ")} ${args.latency ? "ms" : "jobs/s"}`);
    }
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const m = Math.floor(s.length / 2);
      return s.length % 2 ? s[m]! : Math.round((s[m - 1]! + s[m]!) / 2);
    };
    log(
      `\n| worker | median ${args.latency ? "ms, enqueue to outcome" : "jobs/s"} | range | runs |\n|---|---|---|---|`,
    );
    for (const e of entries)
      log(
        `| ${e.name} | ${median(e.rates)} | ${Math.min(...e.rates)}–${Math.max(...e.rates)} | ${e.rates.join(", ")} |`,
      );
    const celery = entries.find((e) => e.name.startsWith("Celery"));
    if (celery)
      for (const e of entries.filter((x) => x.name.startsWith("Python ("))) {
        const ratios = e.rates.map((x, i) => x / celery.rates[i]!);
        log(
          `${e.name} / Celery, same rounds: median ${median(ratios).toFixed(1)}× (${ratios.map((x) => x.toFixed(1)).join(", ")})`,
        );
      }
    if (args.json)
      writeFileSync(
        args.json,
        `${JSON.stringify({ jobs, rounds, entries: entries.map(({ name, rates }) => ({ name, rates })) }, null, 2)}\n`,
      );
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

await main();
