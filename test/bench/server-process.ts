/**
 * A runlater server as a child process for the benchmarks, and the percentile they report.
 * BENCH_SERVER_NODE_FLAGS adds Node flags, BENCH_SERVER_ARGS server options (say
 * `--hand-out-ahead 0`, to compare a setting in one session); BENCH_SERVER_BIN runs another
 * build of the server (a copy of server/bin and server/dist made before a change, to
 * compare before and after in one session).
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { fileURLToPath } from "node:url";

export interface ServerProcess {
  url: string;
  pid: number | undefined;
  stop(): Promise<void>;
}

/** `bin`: another build's server/bin/runlater.js (default BENCH_SERVER_BIN, else this one's). */
export async function startServerProcess(
  stores: string[],
  extraArgs: string[] = [],
  bin = process.env.BENCH_SERVER_BIN ?? fileURLToPath(new URL("../../server/bin/runlater.js", import.meta.url)),
): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_SERVER_NODE_FLAGS ?? "").split(" ").filter(Boolean),
      bin,
      "serve",
      "--port",
      "0",
      "--log-level",
      "warn",
      ...extraArgs,
      ...(process.env.BENCH_SERVER_ARGS ?? "").split(" ").filter(Boolean),
      ...stores.flatMap((s) => ["--store", s]),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  // BENCH_SERVER_STDOUT=FILE keeps what the server prints (with --trace-gc in
  // BENCH_SERVER_NODE_FLAGS, its collections) in FILE.
  if (process.env.BENCH_SERVER_STDOUT) child.stdout.pipe(createWriteStream(process.env.BENCH_SERVER_STDOUT));
  const url = await new Promise<string>((resolve, reject) => {
    let seen = "";
    child.stdout.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (\S+)/.exec(seen);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** The p-th percentile of ascending `sorted` (0 when empty). */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
