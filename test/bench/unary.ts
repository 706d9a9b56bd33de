/**
 * Unary Enqueue over HTTP/1.1 and HTTP/2 (h2c), the choice behind createRunlaterClient's
 * default: one job per call, first with one call in flight (latency), then with
 * --in-flight calls at once (throughput), alternating the two versions each round.
 *
 *   npm run bench -- --unary [--store URL] [--calls 2000] [--in-flight 32] [--rounds 3]
 *                    [--http 1.1,2]  (the HTTP versions to run, in this order each round)
 *                    [--baseline-bin PATH]  (also run another build of the server, a copy of
 *                                    server/bin and server/dist, alternating with this one)
 *
 * Each phase also prints the CPU time per call of the server process, the store's server
 * (Redis, MariaDB: when it runs on this machine) and this process.
 */
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { createRunlaterClient, type RunlaterClient } from "@runlater/sdk";
import { CpuMeter, storePids } from "./cpu.js";
import { percentile, type ServerProcess, startServerProcess } from "./server-process.js";

export async function runUnary(argv: string[]): Promise<void> {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      unary: { type: "boolean" },
      store: { type: "string", default: "memory" },
      calls: { type: "string", default: "2000" },
      "in-flight": { type: "string", default: "32" },
      rounds: { type: "string", default: "3" },
      http: { type: "string", default: "1.1,2" },
      "baseline-bin": { type: "string" },
    },
  });
  const calls = Number(args.calls);
  const inFlight = Number(args["in-flight"]);
  console.log(
    `machine: ${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
  );
  console.log(
    `settings: store=${args.store}, ${calls} Enqueue calls of one 200-byte job per run, sequential then ${inFlight} in flight, Connect binary`,
  );
  const versions = args.http.split(",");
  if (versions.some((v) => v !== "1.1" && v !== "2")) throw new Error("--http takes 1.1, 2 or both");
  const builds: Array<[string, ServerProcess]> = [["this build", await startServerProcess([args.store])]];
  const baselineBin = args["baseline-bin"];
  if (baselineBin) builds.unshift(["baseline", await startServerProcess([args.store], [], baselineBin)]);
  const storeProcesses = args.store.includes("://") ? await storePids(args.store) : {};
  const f = (n: number) => n.toFixed(2);
  try {
    for (let round = 1; round <= Number(args.rounds); round++) {
      for (const [build, server] of builds) {
        for (const httpVersion of versions as Array<"1.1" | "2">) {
          const client = createRunlaterClient(server.url, { httpVersion });
          // Each build's own queue: with a Redis or MySQL store both servers share the store.
          const queue = `unary_${build === "baseline" ? "base" : "this"}_${httpVersion.replace(".", "")}_${round}`;
          const cpu = new CpuMeter({ server: server.pid, ...storeProcesses });
          try {
            const t = performance.now();
            await client.createQueue(queue); // the first call opens the connection
            const first = performance.now() - t;
            const load = loadavg()[0]!.toFixed(1);
            cpu.start();
            const one = await enqueueCalls(client, queue, calls, 1);
            const oneCpu = cpu.stop(calls);
            cpu.start();
            const many = await enqueueCalls(client, queue, calls, inFlight);
            const manyCpu = cpu.stop(calls);
            console.log(
              `round ${round}${builds.length > 1 ? ` ${build}` : ""} HTTP/${httpVersion}: first call ${f(first)} ms; one in flight ${Math.round(one.perS)} calls/s, ` +
                `p50 ${f(percentile(one.ms, 50))} p99 ${f(percentile(one.ms, 99))} ms; ${inFlight} in flight ${Math.round(many.perS)} calls/s, ` +
                `p50 ${f(percentile(many.ms, 50))} p99 ${f(percentile(many.ms, 99))} ms; load ${load}\n` +
                `  CPU per call, one in flight: ${oneCpu.replaceAll("/job", "")}; ${inFlight} in flight: ${manyCpu.replaceAll("/job", "")}`,
            );
            await client.queues.deleteQueue({ name: queue });
          } finally {
            client.close();
          }
        }
      }
    }
  } finally {
    await Promise.all(builds.map(([, server]) => server.stop()));
  }
}

/** `total` Enqueue calls, `parallel` at a time: calls/s and each call's ms, ascending. */
async function enqueueCalls(
  client: RunlaterClient,
  queue: string,
  total: number,
  parallel: number,
): Promise<{ perS: number; ms: number[] }> {
  const body = new Uint8Array(200).fill(120);
  const ms: number[] = [];
  let next = 0;
  const started = performance.now();
  const caller = async () => {
    while (next++ < total) {
      const t = performance.now();
      await client.enqueue(queue, body);
      ms.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: parallel }, caller));
  return { perS: (total / (performance.now() - started)) * 1000, ms: ms.sort((a, b) => a - b) };
}
