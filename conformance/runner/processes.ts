/**
 * The child processes the runner drives: a runlater server (with --enable-test-control,
 * and with auth and TLS in a secure run) and one driver per SDK, spoken to in JSON lines
 * over stdio.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { TestControlService } from "../../server/src/gen/runlater/testing/v1/control_pb.js";
import type { DriverRequest, DriverResponse } from "../protocol.js";
import { controlTransportOptions, type Security, serverSettings } from "./secure.js";

export interface ServerHandle {
  url: string;
  control: Client<typeof TestControlService>;
  /** Server time (epoch ms). */
  now(): Promise<number>;
  /** Moves the server's clock; returns the new time. */
  advance(ms: number): Promise<number>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `scripts/runlater serve --port 0 --enable-test-control` on `store`; with
 * `security`, with auth and TLS, and test control is then called with the cluster secret.
 */
export async function startServer(
  root: string,
  store: string,
  logDir: string,
  security?: Security,
): Promise<ServerHandle> {
  mkdirSync(logDir, { recursive: true });
  const secure = serverSettings(security);
  const name = `server-${store.replace(/[^A-Za-z0-9]+/g, "_").slice(0, 40)}${security ? "-secure" : ""}`;
  const log = createWriteStream(join(logDir, `${name}.log`));
  const child = spawn(
    "bash",
    [
      join(root, "scripts/runlater"),
      "serve",
      "--port",
      "0",
      "--enable-test-control",
      "--log-level",
      "warn",
      "--store",
      store,
      ...secure.args,
    ],
    {
      cwd: root,
      env: { ...process.env, ...secure.env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stderr!.pipe(log);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server on ${store} did not start in 60 s (log: ${log.path})`)),
      60_000,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      const m = /runlater listening on (\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server on ${store} exited with ${code} before listening (log: ${log.path})`));
    });
  });
  const control = createClient(
    TestControlService,
    createConnectTransport({
      baseUrl: url,
      httpVersion: "1.1",
      defaultTimeoutMs: 60_000,
      ...controlTransportOptions(security),
    }),
  );
  const ms = (t: Parameters<typeof timestampDate>[0] | undefined) => (t ? timestampDate(t).getTime() : Number.NaN);
  return {
    url,
    control,
    now: async () => ms((await control.now({})).now),
    advance: async (by) =>
      ms(
        (await control.advanceClock({ duration: { seconds: BigInt(Math.floor(by / 1000)), nanos: (by % 1000) * 1e6 } }))
          .now,
      ),
    reset: async () => void (await control.reset({})),
    stop: () => stopChild(child, log),
  };
}

async function stopChild(child: ChildProcess, log?: WriteStream): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }
  log?.end();
}

/** A driver process: one request line in, one response line out, in turn. */
export class DriverProcess {
  private readonly child: ChildProcess;
  private readonly waiting: Array<(line: string) => void> = [];
  private readonly lines: string[] = [];
  private readonly stderrTail: string[] = [];
  private exited: string | undefined;

  constructor(
    readonly sdk: string,
    command: string[],
    cwd: string,
    env: NodeJS.ProcessEnv,
  ) {
    this.child = spawn(command[0]!, command.slice(1), {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    createInterface({ input: this.child.stdout! }).on("line", (line) => {
      const w = this.waiting.shift();
      if (w) w(line);
      else this.lines.push(line);
    });
    createInterface({ input: this.child.stderr! }).on("line", (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > 40) this.stderrTail.shift();
      if (process.env.CONFORMANCE_VERBOSE) process.stderr.write(`[${sdk}] ${line}\n`);
    });
    this.child.on("exit", (code, signal) => {
      this.exited = `exited with ${signal ?? code}`;
      for (const w of this.waiting.splice(0)) w("");
    });
    this.child.stdin!.on("error", () => {});
  }

  get alive(): boolean {
    return this.exited === undefined;
  }

  /** The driver's last stderr lines, to explain a crash. */
  stderr(): string {
    return this.stderrTail.join("\n");
  }

  async request(req: DriverRequest, timeoutMs: number): Promise<DriverResponse> {
    if (this.exited) throw new Error(`${this.sdk} driver ${this.exited}\n${this.stderr()}`);
    this.child.stdin!.write(`${JSON.stringify(req)}\n`);
    const line = await new Promise<string>((resolve, reject) => {
      const queued = this.lines.shift();
      if (queued !== undefined) return resolve(queued);
      const timer = setTimeout(() => {
        const i = this.waiting.indexOf(done);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(new Error(`${this.sdk} driver did not answer ${req.op} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = (l: string) => {
        clearTimeout(timer);
        resolve(l);
      };
      this.waiting.push(done);
    });
    if (this.exited && line === "") throw new Error(`${this.sdk} driver ${this.exited}\n${this.stderr()}`);
    try {
      return JSON.parse(line) as DriverResponse;
    } catch {
      throw new Error(`${this.sdk} driver wrote a line that is not JSON: ${line.slice(0, 200)}`);
    }
  }

  async stop(): Promise<void> {
    if (this.alive) {
      await this.request({ op: "shutdown" }, 5_000).catch(() => undefined);
      this.child.stdin!.end();
    }
    await stopChild(this.child);
  }
}
