/**
 * `runlater serve` as a new user runs it, in real processes: with no --store it keeps its
 * data in ./runlater-data/runlater.db (created on first start, its path logged), and after
 * Ctrl-C and a new start every queue and job is still there, and so are workflows, their
 * instances (which go on where they stood) and schedules (which fire after it). One server
 * owns a file: a second one on it exits with an error naming the first. --store memory says in its start
 * log that it keeps nothing; split roles refuse SQLite before creating any file.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createRunlaterClient } from "@runlater/sdk";
import { ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { Outcome } from "@runlater/sdk/gen/worker_service_pb.js";
import { InstanceJobState, InstanceState, WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../../server/bin/runlater.js", import.meta.url));
const parentWatch = fileURLToPath(new URL("../cluster/parent-watch.mjs", import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "runlater-serve-"));
  dirs.push(dir);
  return dir;
}

interface Served {
  url: string;
  /** The first JSON log line matching, waited for (stderr and stdout arrive independently). */
  log(match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** SIGINT (Ctrl-C); resolves with the exit code. */
  interrupt(): Promise<number | null>;
}

/** `runlater serve ARGS` in `cwd`; resolves once it listens, rejects with its stderr if it exits first. */
function serve(cwd: string, args: string[]): Promise<Served> {
  const child = spawn(process.execPath, ["--import", parentWatch, bin, "serve", "--port", "0", ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
      const match = /listening on (\S+)/.exec(stdout);
      if (!match) return;
      resolve({
        url: match[1]!,
        async log(matches) {
          for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
            const lines = stderr.split("\n").filter((l) => l.startsWith("{"));
            const found = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find(matches);
            if (found) return found;
            await new Promise((r) => setTimeout(r, 20));
          }
          throw new Error(`no such log line in:\n${stderr}`);
        },
        interrupt: () => {
          child.kill("SIGINT");
          return exited;
        },
      });
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening:\n${stderr}`)));
  });
}

describe("runlater serve on the default SQLite store (real processes)", () => {
  it("keeps every queue and job across Ctrl-C and a new start, in ./runlater-data/runlater.db", async () => {
    const cwd = tempDir();
    const file = join(cwd, "runlater-data", "runlater.db");
    const first = await serve(cwd, []);
    expect(await first.log((l) => l.msg === "store: new SQLite file created")).toMatchObject({
      store: "sqlite",
      path: file,
      synchronous: "normal",
    });
    const client = createRunlaterClient(first.url);
    await client.createQueue("emails");
    const [id] = await client.enqueueMany([{ queue: "emails", body: "hello" }]);
    client.close();
    expect(await first.interrupt()).toBe(0);

    const second = await serve(cwd, []);
    try {
      expect(await second.log((l) => l.msg === "store: SQLite file")).toMatchObject({ path: file });
      const again = createRunlaterClient(second.url);
      const { queues } = await again.queues.listQueues({});
      expect(queues.map((q) => q.name)).toEqual(["emails"]);
      const { jobs } = await again.jobs.getJobs({ jobIds: [id!], includeBody: true });
      expect(new TextDecoder().decode(jobs[0]?.body)).toBe("hello");
      again.close();

      // One server owns the file: a second one on it exits, naming the first.
      await expect(serve(cwd, [])).rejects.toThrow(
        /runlater-data\/runlater\.db is in use by another runlater process \(pid \d+/,
      );
    } finally {
      expect(await second.interrupt()).toBe(0);
    }
  }, 60_000);

  it("keeps workflows, a running instance and a schedule across Ctrl-C and a new start: the instance goes on, the schedule fires", async () => {
    const cwd = tempDir();
    const connect = (url: string) => {
      const transport = createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
      return {
        client: createRunlaterClient(url),
        workflows: createClient(WorkflowService, transport),
        schedules: createClient(ScheduleService, transport),
      };
    };
    const bytes = (s: string) => new TextEncoder().encode(s);

    const first = await serve(cwd, []);
    const a = connect(first.url);
    await a.client.createQueue("steps");
    await a.workflows.applyWorkflow({
      workflow: {
        name: "two_steps",
        jobs: [
          { name: "one", queue: "steps", body: bytes("1") },
          { name: "two", queue: "steps", inputs: [{ source: { case: "job", value: "one" } }] },
        ],
      },
    });
    const { instance } = await a.workflows.startInstance({ workflow: "two_steps" });
    const id = instance!.instanceId;
    // Every second, paused until after the restart (so no fire races the stop).
    await a.schedules.createSchedule({
      schedule: {
        name: "each_second",
        cron: "* * * * * *",
        target: { case: "workflow", value: { workflow: "two_steps" } },
      },
      paused: true,
    });
    a.client.close();
    expect(await first.interrupt()).toBe(0);

    const second = await serve(cwd, []);
    const b = connect(second.url);
    try {
      expect((await b.workflows.listWorkflows({})).workflows.map((w) => [w.name, w.version])).toEqual([
        ["two_steps", 1],
      ]);
      const before = (await b.workflows.getInstance({ instanceId: id })).instance!;
      expect(before.state).toBe(InstanceState.RUNNING);
      expect(before.jobs.find((j) => j.name === "one")?.state).toBe(InstanceJobState.RUNNABLE);
      // The instance goes on where it stood: its first run's job is there to take, and its ACK runs the second.
      for (const step of ["one", "two"]) {
        const { jobs } = await b.client.worker.dequeue({ queue: "steps", limit: 1, wait: { seconds: 10n, nanos: 0 } });
        expect(jobs[0]?.workflow?.job, step).toBe(step);
        const { results } = await b.client.worker.ack({
          queue: "steps",
          succeeded: [{ jobId: jobs[0]!.jobId, claimToken: jobs[0]!.claimToken, result: bytes(step) }],
        });
        expect(results[0]!.outcome).toBe(Outcome.ACKNOWLEDGED);
      }
      expect((await b.workflows.getInstance({ instanceId: id })).instance!.state).toBe(InstanceState.SUCCEEDED);

      const kept = (await b.schedules.getSchedule({ name: "each_second" })).schedule!;
      expect(kept).toMatchObject({ cron: "* * * * * *", paused: true, fires: 0n });
      await b.schedules.resumeSchedule({ name: "each_second" });
      let fired = kept;
      for (const deadline = Date.now() + 10_000; fired.fires === 0n && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 100));
        fired = (await b.schedules.getSchedule({ name: "each_second" })).schedule!;
      }
      expect(fired.lastStarted).toMatch(/^each_second@/);
      expect((await b.workflows.getInstance({ instanceId: fired.lastStarted })).instance?.workflow).toBe("two_steps");
    } finally {
      b.client.close();
      expect(await second.interrupt()).toBe(0);
    }
  }, 60_000);

  it("says at start that the memory store is throwaway, and refuses split roles on SQLite without creating a file", async () => {
    const cwd = tempDir();
    const memory = await serve(cwd, ["--store", "memory"]);
    expect((await memory.log((l) => l.store === "memory" && String(l.msg).startsWith("store:"))).msg).toMatch(
      /throwaway: every queue and job is lost when this process exits/,
    );
    expect(await memory.interrupt()).toBe(0);
    await expect(serve(cwd, ["--role", "broker"])).rejects.toThrow(
      "--role broker needs a shared store (redis:// or mysql://): a SQLite file is owned by one process",
    );
    expect(existsSync(join(cwd, "runlater-data"))).toBe(false);
  }, 60_000);
});
