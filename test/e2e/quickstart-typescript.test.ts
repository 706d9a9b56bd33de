/**
 * docs/quickstart-typescript.md, run as written: the blocks between its quickstart markers,
 * in order, in an empty directory against a real server. A `ts` block is written to the
 * file its first line names (`// worker.ts`); a `sh` block runs in bash, and one that
 * "runs until Ctrl-C" gets a SIGINT once the jobs are done, as a user would send it.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createRunlaterClient, JobState } from "@runlater/sdk";
import { afterAll, beforeAll, expect, it } from "vitest";
import { eventually } from "../../sdk-ts/test/helpers.js";
import { type RunningServer, startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

let server: RunningServer;
let project: string;
beforeAll(async () => {
  server = await startServer({ store: new MemoryStore(), port: 0 });
  project = mkdtempSync(join(tmpdir(), "runlater-quickstart-"));
});
afterAll(async () => {
  await server.stop();
  rmSync(project, { recursive: true, force: true });
});

function blocks(): Array<{ lang: string; text: string }> {
  const page = readFileSync(join(root, "docs/quickstart-typescript.md"), "utf8");
  const section = /<!-- quickstart:start -->([\s\S]*?)<!-- quickstart:end -->/.exec(page);
  if (!section) throw new Error("docs/quickstart-typescript.md has no block between the quickstart markers");
  return [...section[1]!.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }));
}

it("runs the TypeScript quick start as written", async () => {
  // A user's shell: the test's Node on PATH, no loader or condition of this repository.
  const env: NodeJS.ProcessEnv = { ...process.env, RUNLATER_URL: server.url, RUNLATER_HOME: root };
  delete env.NODE_OPTIONS;
  const outputs: string[] = [];
  const client = createRunlaterClient(server.url);
  for (const block of blocks()) {
    if (block.lang === "ts") {
      const name = /^\/\/ (\S+)\n/.exec(block.text)?.[1];
      if (!name) throw new Error(`a ts block must start with // FILENAME:\n${block.text}`);
      writeFileSync(join(project, name), block.text);
    } else if (block.lang === "sh" && block.text.includes("runs until Ctrl-C")) {
      const child = spawn("bash", ["-c", block.text], { cwd: project, env, detached: true });
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
      try {
        await eventually(async () => {
          const done = await Promise.all(
            [JobState.SUCCEEDED, JobState.FAILED].map((state) => client.jobs.countJobs({ queue: "emails", state })),
          );
          expect(done.map((r) => Number(r.count))).toEqual([2, 1]);
        }, 30_000);
        process.kill(-child.pid!, "SIGINT");
        expect(await exited).toBe(0);
      } finally {
        if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
      }
      outputs.push(out);
    } else if (block.lang === "sh") {
      const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", block.text], {
        cwd: project,
        env,
      });
      outputs.push(stdout);
    } else {
      throw new Error(`a block of an unknown kind (${block.lang}) between the quickstart markers`);
    }
  }
  const [, producer, worker] = outputs;
  const enqueued = [...producer!.matchAll(/^enqueued (\S+) for (\S+)$/gm)].map((m) => [m[2]!, m[1]!] as const);
  expect(enqueued.map(([to]) => to)).toEqual(["ada@example.com", "grace@example.com", "linus@example.invalid"]);
  expect(worker).toContain("sending to ada@example.com");
  expect(worker).toContain("worker stopped");
  const { jobs } = await client.jobs.getJobs({ jobIds: enqueued.map(([, id]) => id) });
  expect(jobs.map((j) => [JobState[j.state], j.customStatus])).toEqual([
    ["SUCCEEDED", "sent to ada@example.com"],
    ["SUCCEEDED", "sent to grace@example.com"],
    ["FAILED", "cannot deliver to linus@example.invalid"],
  ]);
}, 120_000);
