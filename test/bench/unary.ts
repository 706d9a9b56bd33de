/**
 * Unary Enqueue over HTTP/1.1 and HTTP/2 (h2c), the choice behind createRunlaterClient's
 * default: one job per call, first with one call in flight (latency), then with
 * --in-flight calls at once (throughput), alternating the two versions each round.
 *
 *   npm run bench -- --unary [--store URL] [--calls 2000] [--in-flight 32] [--rounds 3]
 */
import { cpus, loadavg, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { createRunlaterClient, type RunlaterClient } from "@runlater/sdk";
import { percentile, startServerProcess } from "./server-process.js";

export async function runUnary(argv: string[]): Promise<void> {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      unary: { type: "boolean" },
      store: { type: "string", default: "memory" },
      calls: { type: "string", default: "2000" },
      "in-flight": { type: "string", default: "32" },
      rounds: { type: "string", default: "3" },
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
  const server = await startServerProcess([args.store]);
  const f = (n: number) => n.toFixed(2);
  try {
    for (let round = 1; round <= Number(args.rounds); round++) {
      for (const httpVersion of ["1.1", "2"] as const) {
        const client = createRunlaterClient(server.url, { httpVersion });
        const queue = `unary_${httpVersion.replace(".", "")}_${round}`;
        try {
          const t = performance.now();
          await client.createQueue(queue); // the first call opens the connection
          const first = performance.now() - t;
          const load = loadavg()[0]!.toFixed(1);
          const one = await enqueueCalls(client, queue, calls, 1);
          const many = await enqueueCalls(client, queue, calls, inFlight);
          console.log(
            `round ${round} HTTP/${httpVersion}: first call ${f(first)} ms; one in flight ${Math.round(one.perS)} calls/s, ` +
              `p50 ${f(percentile(one.ms, 50))} p99 ${f(percentile(one.ms, 99))} ms; ${inFlight} in flight ${Math.round(many.perS)} calls/s, ` +
              `p50 ${f(percentile(many.ms, 50))} p99 ${f(percentile(many.ms, 99))} ms; load ${load}`,
          );
          await client.queues.deleteQueue({ name: queue });
        } finally {
          client.close();
        }
      }
    }
  } finally {
    await server.stop();
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
