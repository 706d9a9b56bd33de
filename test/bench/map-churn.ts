/**
 * A Map whose entries come and go with every job, and what the young generation keeps
 * (docs/benchmarks.md, "Maps that churn"): batches of 100 jobs a turn, up to 100 running,
 * each awaiting a no-op async handler and then leaving the table of running jobs. Prints
 * the bytes promoted for each kind of table: a Map, a Set, a plain object, or none.
 *
 *   npx tsx test/bench/map-churn.ts [--seconds 3]
 *
 * Runs each kind in a child process of this Node under --trace-gc-nvp; never run in CI.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { scavenges } from "./gc-trace.js";

const { values: args } = parseArgs({
  options: { seconds: { type: "string", default: "3" }, kind: { type: "string" } },
});

if (args.kind) await churn(args.kind, Number(args.seconds) * 1000);
else {
  console.log(`node ${process.version}`);
  for (const kind of ["map", "set", "object", "none"]) {
    const run = spawnSync(
      process.execPath,
      [
        "--trace-gc-nvp",
        ...process.execArgv,
        fileURLToPath(import.meta.url),
        "--kind",
        kind,
        "--seconds",
        args.seconds!,
      ],
      { encoding: "utf8" },
    );
    const found = scavenges(run.stdout);
    const promoted = found.map((s) => s.promoted);
    const pauses = found.map((s) => s.pauseMs);
    const jobs = /jobs (\d+)/.exec(run.stdout)?.[1];
    const mb = promoted.reduce((a, b) => a + b, 0) / 2 ** 20;
    console.log(
      `${kind.padEnd(7)} ${jobs} jobs, ${promoted.length} scavenges, ${mb.toFixed(1)} MB promoted, ` +
        `pauses ${pauses.reduce((a, b) => a + b, 0).toFixed(0)} ms in all, at most ${Math.max(0, ...pauses)} ms`,
    );
  }
}

async function churn(kind: string, ms: number): Promise<void> {
  interface Run {
    id: string;
    body: Uint8Array;
  }
  const map = new Map<string, Run>();
  const set = new Set<Run>();
  const object: Record<string, Run> = Object.create(null);
  let running = 0;
  const add = (run: Run) => {
    running++;
    if (kind === "map") map.set(run.id, run);
    else if (kind === "set") set.add(run);
    else if (kind === "object") object[run.id] = run;
  };
  const remove = (run: Run) => {
    running--;
    if (kind === "map") map.delete(run.id);
    else if (kind === "set") set.delete(run);
    else if (kind === "object") delete object[run.id];
  };
  const handler = async (_run: Run) => {};
  const execute = async (run: Run) => {
    await handler(run);
    remove(run);
  };
  let jobs = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    for (let i = 0; i < 100 && running < 100; i++) {
      const run = { id: `queue.0.${jobs++}`, body: new Uint8Array(200) };
      add(run);
      void execute(run);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  console.log(`jobs ${jobs}`);
}
