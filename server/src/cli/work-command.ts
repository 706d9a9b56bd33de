/**
 * One job's run of the command given to `runlater work` (docs/cli.md#work): the body on
 * stdin, the job's metadata in RUNLATER_* variables, the first line of stdout and the
 * tail of stderr kept within a bound (the rest is copied through, never stored), a
 * timeout, and the command's process group killed when it runs out or when the worker
 * gives up on the job. What the command's end means for the job is in work-outcome.ts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { StringDecoder } from "node:string_decoder";
import { toJson } from "@bufbuild/protobuf";
import type { WorkerJob } from "@runlater/sdk";
import { WorkflowEventSchema } from "@runlater/sdk/gen/workflow_service_pb.js";
import { limits } from "../domain/limits.js";

/** After SIGTERM, how long a command's process group has before SIGKILL. */
export const KILL_AFTER_MS = 5_000;
/** Bytes kept of stdout's start and of stderr's end: enough for a full custom status. */
const KEPT_BYTES = 4 * limits.customStatusMaxLength;

/** How a command ended. */
export interface CommandEnd {
  /** Its exit code; null when a signal ended it or it never started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Killed because it outlived --timeout. */
  timedOut: boolean;
  /** It could not be started (spawn failed). */
  startError?: Error;
  /** stdout's first line, without its line ending (bounded). */
  firstLine: string;
  /** stderr's last bytes as text, trimmed (bounded). */
  stderrTail: string;
}

export interface CommandRunnerOptions {
  /** The command and its arguments. */
  argv: string[];
  /** The worker's own environment; the job's RUNLATER_* variables are added to it. */
  env: Record<string, string | undefined>;
  /** The server the worker talks to, passed on as RUNLATER_URL. */
  url: string;
  queue: string;
  /** Longest run of one command; 0 for none. */
  timeoutMs: number;
  /** Where the command's stdout and stderr are copied (the worker's own). */
  out(text: string): void;
  err(text: string): void;
}

/** Variables set per job; inherited ones of these names are removed first. */
const JOB_VARIABLES = /^RUNLATER_(JOB_ID|QUEUE|ATTEMPT|ATTEMPTS_ALLOWED|PRIORITY|CUSTOM_STATUS|CREATED_AT|WORKFLOW.*)$/;

/** Runs the command once per job and knows which commands are running. */
export class CommandRunner {
  private readonly running = new Set<ChildProcess>();
  private idle: Array<() => void> = [];

  constructor(private readonly o: CommandRunnerOptions) {}

  /** Commands running now. */
  get active(): number {
    return this.running.size;
  }

  /** Runs the command for `job`; resolves once it has exited and closed its output. */
  run(job: WorkerJob): Promise<CommandEnd> {
    const [file, ...args] = this.o.argv;
    const firstLine = new FirstLine();
    const tail = new Tail();
    let child: ChildProcess;
    try {
      // detached: the command leads its own process group, so a kill reaches what it
      // started too (a shell's children), and the worker's Ctrl-C does not reach it: a
      // stopping worker lets running commands finish.
      child = spawn(file!, args, { detached: true, stdio: ["pipe", "pipe", "pipe"], env: this.envFor(job) });
    } catch (err) {
      return Promise.resolve({
        code: null,
        signal: null,
        timedOut: false,
        startError: err as Error,
        firstLine: "",
        stderrTail: "",
      });
    }
    this.running.add(child);
    return new Promise<CommandEnd>((resolve) => {
      let timedOut = false;
      let killTimer: NodeJS.Timeout | undefined;
      const terminate = () => {
        if (killTimer) return;
        signalGroup(child, "SIGTERM");
        killTimer = setTimeout(() => signalGroup(child, "SIGKILL"), KILL_AFTER_MS);
      };
      const timeout =
        this.o.timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              terminate();
            }, this.o.timeoutMs)
          : undefined;
      // The worker gave up on the job (its shutdown grace ran out, or the claim was lost).
      const onAbort = () => terminate();
      job.signal.addEventListener("abort", onAbort);
      if (job.signal.aborted) terminate();

      // A command that does not read its stdin closes the pipe: the write then fails
      // (EPIPE), which only means the body was not wanted.
      child.stdin!.on("error", () => {});
      child.stdin!.end(job.body);
      const outText = new StringDecoder("utf8");
      const errText = new StringDecoder("utf8");
      child.stdout!.on("data", (chunk: Buffer) => {
        firstLine.push(chunk);
        this.o.out(outText.write(chunk));
      });
      child.stderr!.on("data", (chunk: Buffer) => {
        tail.push(chunk);
        this.o.err(errText.write(chunk));
      });

      let startError: Error | undefined;
      child.on("error", (err) => (startError = err));
      child.on("close", (code, signal) => {
        clearTimeout(timeout);
        clearTimeout(killTimer);
        job.signal.removeEventListener("abort", onAbort);
        this.running.delete(child);
        if (this.running.size === 0) for (const wake of this.idle.splice(0)) wake();
        this.o.out(outText.end());
        this.o.err(errText.end());
        resolve({
          code: startError ? null : code,
          signal: startError ? null : signal,
          timedOut,
          startError,
          firstLine: firstLine.text(),
          stderrTail: tail.text(),
        });
      });
    });
  }

  /** Kills every running command's process group at once (SIGKILL). */
  killAll(): void {
    for (const child of this.running) signalGroup(child, "SIGKILL");
  }

  /** Resolves once no command is running. */
  settled(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private envFor(job: WorkerJob): Record<string, string | undefined> {
    const env: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(this.o.env)) if (!JOB_VARIABLES.test(name)) env[name] = value;
    Object.assign(env, {
      RUNLATER_URL: this.o.url,
      RUNLATER_QUEUE: this.o.queue,
      RUNLATER_JOB_ID: job.id,
      RUNLATER_ATTEMPT: String(job.attempt),
      RUNLATER_ATTEMPTS_ALLOWED: String(job.attemptsAllowed),
      RUNLATER_PRIORITY: String(job.priority),
      RUNLATER_CUSTOM_STATUS: job.customStatus,
      RUNLATER_CREATED_AT: job.createdAt.toISOString(),
    });
    const wf = job.workflow;
    if (wf) {
      Object.assign(env, {
        RUNLATER_WORKFLOW: wf.workflow,
        RUNLATER_WORKFLOW_VERSION: String(wf.version),
        RUNLATER_WORKFLOW_INSTANCE_ID: wf.instanceId,
        RUNLATER_WORKFLOW_JOB: wf.job,
        RUNLATER_WORKFLOW_RUN: String(wf.run),
        // At most 10 inputs × (4 KiB result + 1000-character status): well within the
        // 128 KiB Linux allows one variable.
        RUNLATER_WORKFLOW_TRIGGERED_BY: JSON.stringify(wf.triggeredBy.map((e) => toJson(WorkflowEventSchema, e))),
      });
    }
    return env;
  }
}

/** Signals the command's whole process group; a group that is gone already is fine. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: every process of the group has exited.
  }
}

/** The first line of a stream, from at most KEPT_BYTES of its start. */
class FirstLine {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private done = false;

  push(chunk: Buffer): void {
    if (this.done) return;
    const part = chunk.subarray(0, KEPT_BYTES - this.bytes);
    this.chunks.push(part);
    this.bytes += part.length;
    this.done = part.includes(0x0a) || this.bytes >= KEPT_BYTES;
  }

  text(): string {
    const line = new TextDecoder().decode(Buffer.concat(this.chunks)).split("\n", 1)[0]!;
    return firstChars(line.replace(/\r$/, ""), limits.customStatusMaxLength);
  }
}

/** The last KEPT_BYTES of a stream. */
class Tail {
  private kept = Buffer.alloc(0);
  private cut = false;

  push(chunk: Buffer): void {
    const joined = Buffer.concat([this.kept, chunk]);
    this.cut ||= joined.length > KEPT_BYTES;
    this.kept = Buffer.from(joined.subarray(Math.max(0, joined.length - KEPT_BYTES)));
  }

  text(): string {
    const text = new TextDecoder().decode(this.kept);
    // A cut may split a character: the decoder shows its rest as U+FFFD.
    return (this.cut ? text.replace(/^\uFFFD+/, "") : text).trim();
  }
}

/** The first `max` characters (code points) of `text`. */
function firstChars(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(0, max).join("");
}

/** The last `max` characters (code points) of `text`. */
export function lastChars(text: string, max: number): string {
  if (text.length <= max) return text;
  return Array.from(text).slice(-max).join("");
}
