/**
 * Runs the CLI in-process against an in-process server: stdout, stderr, stdin and the
 * environment go through a CliIo, so a command costs milliseconds, not a Node start-up.
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import type { CliIo } from "../src/cli/io.js";
import { buildProgram } from "../src/cli/main.js";
import { runCli } from "../src/cli/run.js";
import { type RunningServer, startServer } from "../src/server.js";
import { MemoryStore } from "../src/store/memory/memory-store.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Environment seen by the CLI; default: RUNLATER_URL pointing at the test server. */
  env?: Record<string, string | undefined>;
  /** Bytes on stdin; giving them makes stdin "piped" (not a terminal). */
  stdin?: string | Uint8Array;
}

export interface CliHarness {
  server: RunningServer;
  /** Runs `runlater ARGS…` and returns its exit code and output. */
  run(args: string[], options?: RunOptions): Promise<CliResult>;
  queues: Client<typeof QueueService>;
  jobs: Client<typeof JobService>;
  workers: Client<typeof WorkerService>;
  stop(): Promise<void>;
}

export async function runIn(
  args: string[],
  env: Record<string, string | undefined>,
  stdin?: string | Uint8Array,
): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    out: (s) => void (stdout += s),
    err: (s) => void (stderr += s),
    readStdin: async () => (typeof stdin === "string" ? new TextEncoder().encode(stdin) : (stdin ?? new Uint8Array())),
    stdinIsTTY: stdin === undefined,
    env,
  };
  const code = await runCli(buildProgram(io), args, io, "user");
  return { code, stdout, stderr };
}

export async function startHarness(): Promise<CliHarness> {
  // A short grace: idle keep-alive connections from the clients below would otherwise hold
  // shutdown open until they time out (see the report on listener.close).
  const server = await startServer({ store: new MemoryStore(), port: 0, shutdownGraceMs: 200 });
  const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
  return {
    server,
    run: (args, options = {}) => runIn(args, options.env ?? { RUNLATER_URL: server.url }, options.stdin),
    queues: createClient(QueueService, transport),
    jobs: createClient(JobService, transport),
    workers: createClient(WorkerService, transport),
    stop: () => server.stop(),
  };
}

/** The non-empty lines of some output. */
export function lines(text: string): string[] {
  return text.split("\n").filter((l) => l !== "");
}

/** Splits a table printed by the CLI into rows of cells (header row first). */
export function tableRows(text: string): string[][] {
  return lines(text).map((l) => l.trim().split(/\s{2,}/));
}
