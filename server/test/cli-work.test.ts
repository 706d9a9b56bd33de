/**
 * `runlater work QUEUE -- COMMAND`: the real bin in a child process (signals, process
 * groups and pipes are what is tested), running real commands against an in-process
 * server. Usage errors run in-process (cli-harness).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { type Job, JobState } from "@runlater/sdk/gen/job_pb.js";
import { WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../sdk-ts/test/helpers.js";
import { type CliHarness, startHarness } from "./cli-harness.js";

const BIN = fileURLToPath(new URL("../bin/runlater.js", import.meta.url));

let h: CliHarness;
let workflows: Client<typeof WorkflowService>;
beforeAll(async () => {
  h = await startHarness();
  workflows = createClient(WorkflowService, createConnectTransport({ baseUrl: h.server.url, httpVersion: "1.1" }));
});
afterAll(() => h.stop());

interface Work {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout(): string;
  stderr(): string;
}
const started: Work[] = [];
afterEach(() => {
  for (const w of started.splice(0))
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
});

/** `runlater work ARGS…` in its own process, talking to the test server. */
function work(args: string[]): Work {
  const child = spawn(process.execPath, [BIN, "work", ...args], {
    env: { ...withoutRunlaterVariables(), RUNLATER_URL: h.server.url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  const w = { child, exited, stdout: () => out, stderr: () => err };
  started.push(w);
  return w;
}

/** This process's environment without RUNLATER_* (the services' URLs): the commands see only the worker's. */
function withoutRunlaterVariables(): Record<string, string | undefined> {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("RUNLATER_")));
}

/** eventually(), with room for a worker process to start on a loaded machine. */
const soon = <T>(check: () => T | Promise<T>) => eventually(check, 15_000);

async function job(id: string): Promise<Job> {
  const { jobs } = await h.jobs.getJobs({ jobIds: [id] });
  return jobs[0]!;
}

/** Waits until job `id` is in `state`, and returns it. */
function inState(id: string, state: JobState): Promise<Job> {
  return soon(async () => {
    const j = await job(id);
    expect(JobState[j.state]).toBe(JobState[state]);
    return j;
  });
}

async function enqueue(queue: string, body: string | Uint8Array, attemptsAllowed = 0, priority = 0): Promise<string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const { jobIds } = await h.jobs.enqueue({ jobs: [{ queue, body: bytes, attemptsAllowed, priority }] });
  return jobIds[0]!;
}

let queues = 0;
async function newQueue(maxBodyBytes = 0): Promise<string> {
  const name = `work_${++queues}`;
  await h.queues.createQueue({ name, config: { maxBodyBytes } });
  return name;
}

const tmp = () => mkdtempSync(join(tmpdir(), "runlater-work-"));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.each([
  { mode: "stream (HTTP/2)", flags: [] },
  { mode: "poll (HTTP/1.1)", flags: ["--poll"] },
])("runlater work, $mode", ({ flags }) => {
  it("runs the command per job: body on stdin, the job in RUNLATER_*, stdout's first line as the status", async () => {
    const q = await newQueue();
    const dir = tmp();
    const a = await enqueue(q, "hello", 3, 2);
    const b = await enqueue(q, new Uint8Array([0, 1, 2, 255]));
    const w = work([
      q,
      ...flags,
      "--",
      "sh",
      "-c",
      'cat > "$0/$RUNLATER_JOB_ID.body"; env | grep ^RUNLATER_ | sort > "$0/$RUNLATER_JOB_ID.env"; echo "done $RUNLATER_JOB_ID"; echo more',
      dir,
    ]);
    const done = await inState(a, JobState.SUCCEEDED);
    expect(done.customStatus).toBe(`done ${a}`);
    expect(readFileSync(join(dir, `${a}.body`), "utf8")).toBe("hello");
    const env = Object.fromEntries(
      readFileSync(join(dir, `${a}.env`), "utf8")
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(env).toEqual({
      RUNLATER_ATTEMPT: "1",
      RUNLATER_ATTEMPTS_ALLOWED: "3",
      RUNLATER_CREATED_AT: new Date(timestampMs(done.createdAt!)).toISOString(),
      RUNLATER_CUSTOM_STATUS: "",
      RUNLATER_JOB_ID: a,
      RUNLATER_PRIORITY: "2",
      RUNLATER_QUEUE: q,
      RUNLATER_URL: h.server.url,
    });
    await inState(b, JobState.SUCCEEDED);
    expect([...readFileSync(join(dir, `${b}.body`))]).toEqual([0, 1, 2, 255]);
    // The commands' output is copied to the worker's.
    expect(w.stdout()).toContain(`done ${a}\nmore\n`);
    w.child.kill("SIGTERM");
    expect(await w.exited).toEqual({ code: 0, signal: null });
    expect(w.stderr()).toContain("runlater work: stopped");
  });

  it("reads the exit code: 75 retries after stdout's delay, 65 fails for good, others fail with stderr's tail", async () => {
    const q = await newQueue();
    const dir = tmp();
    const script = join(dir, "handler.sh");
    writeFileSync(
      script,
      `#!/bin/sh
case "$(cat)" in
  later) echo 1h; echo "busy, try later" >&2; exit 75 ;;
  soon) echo soon; exit 75 ;;
  bad) echo "malformed body" >&2; exit 65 ;;
  noisy) seq 1 5000 >&2; exit 3 ;;
  crash) kill -9 $$ ;;
esac
`,
    );
    chmodSync(script, 0o755);
    const later = await enqueue(q, "later", 5);
    const noDelay = await enqueue(q, "soon", 1);
    const bad = await enqueue(q, "bad", 5);
    const noisy = await enqueue(q, "noisy", 1);
    const crash = await enqueue(q, "crash", 1);
    const before = Date.now();
    const w = work([q, ...flags, "--concurrency", "5", "--", script]);

    const retried = await soon(async () => {
      const j = await job(later);
      expect(j.customStatus).not.toBe("");
      return j;
    });
    expect(JobState[retried.state]).toBe("PENDING");
    expect(retried.customStatus).toBe("exit 75, retry after 1h: busy, try later");
    expect(timestampMs(retried.runAfter!) - before).toBeGreaterThanOrEqual(3_600_000 - 1000);

    expect((await inState(noDelay, JobState.FAILED)).customStatus).toBe(
      `exit 75 with "soon" on stdout's first line, which is not a delay (30s, 5m, 1h30m)`,
    );
    const failed = await inState(bad, JobState.FAILED);
    expect(failed.customStatus).toBe("exit 65, not retried: malformed body");
    expect(failed.attemptsRemaining).toBe(4); // attempts were left: not retried anyway

    const status = (await inState(noisy, JobState.FAILED)).customStatus;
    expect(status.startsWith("exit 3: ")).toBe(true);
    expect(status.endsWith("\n4999\n5000")).toBe(true);
    expect([...status].length).toBeLessThanOrEqual(500); // the Worker's failure status bound, tail kept

    expect((await inState(crash, JobState.FAILED)).customStatus).toBe("killed by SIGKILL");
    expect(w.stderr()).toContain(`job ${bad} (attempt 1 of 5): exit 65, not retried: malformed body`);
    w.child.kill("SIGTERM");
    expect((await w.exited).code).toBe(0);
  });
});

describe("runlater work: commands that misbehave", () => {
  it("kills a command that outlives --timeout, and what it started (its process group)", async () => {
    const q = await newQueue();
    const dir = tmp();
    const id = await enqueue(q, "x", 1);
    const w = work([q, "--timeout", "300ms", "--", "sh", "-c", 'sleep 60 & echo $! > "$0/pid"; wait', dir]);
    const failed = await inState(id, JobState.FAILED);
    expect(failed.customStatus).toBe("timed out after 300ms");
    const sleeper = Number(readFileSync(join(dir, "pid"), "utf8"));
    await soon(() => expect(alive(sleeper)).toBe(false));
    w.child.kill("SIGTERM");
    expect((await w.exited).code).toBe(0);
  });

  it("gives a large body to a command that never reads its stdin, without blocking", async () => {
    const q = await newQueue(8 * 1024 * 1024);
    const body = new Uint8Array(8 * 1024 * 1024).fill(0x61);
    const ignored = await enqueue(q, body);
    const read = await enqueue(q, body);
    const w = work([q, "--", "sh", "-c", '[ "$RUNLATER_JOB_ID" = "$0" ] && echo ignored || wc -c', ignored]);
    expect((await inState(ignored, JobState.SUCCEEDED)).customStatus).toBe("ignored");
    expect((await inState(read, JobState.SUCCEEDED)).customStatus.trim()).toBe(String(body.length));
    w.child.kill("SIGTERM");
    expect((await w.exited).code).toBe(0);
  });
});

describe("runlater work: stopping", () => {
  /** A command that says it started and then waits for the test to let it finish. */
  const gated = (dir: string) => [
    "sh",
    "-c",
    'touch "$0/started.$RUNLATER_JOB_ID"; while [ ! -e "$0/go" ]; do sleep 0.05; done; echo finished',
    dir,
  ];

  it("on SIGTERM takes no new job and lets the running command finish", async () => {
    const q = await newQueue();
    const dir = tmp();
    const first = await enqueue(q, "1");
    const second = await enqueue(q, "2");
    const w = work([q, "--", ...gated(dir)]);
    await soon(() => expect(existsSync(join(dir, `started.${first}`))).toBe(true));
    w.child.kill("SIGTERM");
    await soon(() => expect(w.stderr()).toContain("SIGTERM: stopping; 1 running command(s)"));
    writeFileSync(join(dir, "go"), "");
    expect(await w.exited).toEqual({ code: 0, signal: null });
    expect((await job(first)).customStatus).toBe("finished");
    expect(JobState[(await job(first)).state]).toBe("SUCCEEDED");
    // The second job never ran, and no attempt of it was used.
    const untouched = await job(second);
    expect(JobState[untouched.state]).toBe("PENDING");
    expect(untouched.attemptsRemaining).toBe(untouched.attemptsAllowed);
    expect(existsSync(join(dir, `started.${second}`))).toBe(false);
  });

  it("when the grace runs out, kills the running commands and hands their jobs back", async () => {
    const q = await newQueue();
    const dir = tmp();
    const id = await enqueue(q, "1");
    const w = work([q, "--shutdown-grace", "200ms", "--", ...gated(dir)]);
    await soon(() => expect(existsSync(join(dir, `started.${id}`))).toBe(true));
    w.child.kill("SIGTERM");
    expect(await w.exited).toEqual({ code: 0, signal: null });
    expect(w.stderr()).toContain(`job ${id}: command stopped: worker stopped and the shutdown grace period ran out`);
    const back = await job(id);
    expect(JobState[back.state]).toBe("PENDING");
    expect(back.attemptsRemaining).toBe(back.attemptsAllowed);
    // No command is left behind: a new worker finishes the job.
    writeFileSync(join(dir, "go"), "");
    const again = work([q, "--", ...gated(dir)]);
    expect((await inState(id, JobState.SUCCEEDED)).customStatus).toBe("finished");
    again.child.kill("SIGTERM");
    await again.exited;
  });

  it("on a second SIGINT kills the running commands at once and exits", async () => {
    const q = await newQueue();
    const dir = tmp();
    const id = await enqueue(q, "1");
    const w = work([q, "--", "sh", "-c", 'echo $$ > "$0/pid"; touch "$0/started"; sleep 60', dir]);
    await soon(() => expect(existsSync(join(dir, "started"))).toBe(true));
    const shell = Number(readFileSync(join(dir, "pid"), "utf8"));
    w.child.kill("SIGINT");
    await soon(() => expect(w.stderr()).toContain("SIGINT: stopping"));
    w.child.kill("SIGINT");
    expect(await w.exited).toEqual({ code: 130, signal: null });
    await soon(() => expect(alive(shell)).toBe(false));
    // Its claim is left to expire: the job runs again after the claim timeout.
    expect(JobState[(await job(id)).state]).toBe("RUNNING");
  });
});

describe("runlater work --max-jobs", () => {
  it("stops by itself once that many jobs have finished, handing back the rest unused", async () => {
    const q = await newQueue();
    const ids = [await enqueue(q, "a"), await enqueue(q, "b"), await enqueue(q, "c")];
    const w = work([q, "--max-jobs", "2", "--", "sh", "-c", 'echo "did $(cat)"']);
    expect(await w.exited).toEqual({ code: 0, signal: null });
    const jobs = await Promise.all(ids.map(job));
    expect(jobs.map((j) => JobState[j.state])).toEqual(["SUCCEEDED", "SUCCEEDED", "PENDING"]);
    expect(jobs.map((j) => j.customStatus)).toEqual(["did a", "did b", ""]);
    expect(jobs[2]!.attemptsRemaining).toBe(jobs[2]!.attemptsAllowed);
    expect(w.stderr()).toContain("2 job(s) finished (--max-jobs): stopping");
  });
});

describe("runlater work: workflow runs", () => {
  it("puts the run's workflow context in RUNLATER_WORKFLOW_* variables", async () => {
    const q = await newQueue();
    const dir = tmp();
    await workflows.applyWorkflow({ workflow: { name: `wf_${q}`, jobs: [{ name: "only", queue: q }] } });
    const { instance } = await workflows.startInstance({ workflow: `wf_${q}` });
    const w = work([q, "--", "sh", "-c", 'env | grep ^RUNLATER_WORKFLOW > "$0/env"; echo ok', dir]);
    await soon(() => expect(readFileSync(join(dir, "env"), "utf8")).toContain("RUNLATER_WORKFLOW_RUN="));
    const env = Object.fromEntries(
      readFileSync(join(dir, "env"), "utf8")
        .trim()
        .split("\n")
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(env).toMatchObject({
      RUNLATER_WORKFLOW: `wf_${q}`,
      RUNLATER_WORKFLOW_VERSION: "1",
      RUNLATER_WORKFLOW_INSTANCE_ID: instance!.instanceId,
      RUNLATER_WORKFLOW_JOB: "only",
      RUNLATER_WORKFLOW_RUN: "1",
    });
    expect(Array.isArray(JSON.parse(env.RUNLATER_WORKFLOW_TRIGGERED_BY!))).toBe(true);
    w.child.kill("SIGTERM");
    await w.exited;
  });
});

describe("runlater work: usage", () => {
  it("refuses a missing command, a bad concurrency or timeout, and a command that does not exist (exit 2)", async () => {
    const q = await newQueue();
    const none = await h.run(["work", q]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("error: no command: give it after --, e.g. runlater work emails -- ./send.sh");
    const zero = await h.run(["work", q, "--concurrency", "0", "--", "true"]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toContain('"0" is not a whole number of at least 1');
    const timeout = await h.run(["work", q, "--timeout", "10", "--", "true"]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain('"10" is not a duration');
    const long = await h.run(["work", q, "--timeout", "30d", "--", "true"]);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain("error: --timeout is at most 24d20h31m23s647ms");
    const missing = await h.run(["work", q, "--", "no-such-command-here"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("error: no-such-command-here: command not found (or not executable)");
  });

  it("exits 1 when the queue does not exist", async () => {
    const r = await h.run(["work", "nope", "--", "true"], {
      env: { RUNLATER_URL: h.server.url, PATH: process.env.PATH },
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: not_found: queue "nope" does not exist/);
  });
});
