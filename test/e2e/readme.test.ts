/**
 * The README's five-minute tour and its CLI version, executed literally: the shell block
 * between each pair of markers runs in bash against a real server (RUNLATER_URL points at
 * it).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ store: new MemoryStore(), port: 0 });
});
afterAll(() => server.stop());

function tourScript(marker = "tour"): string {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = new RegExp(
    `<!-- ${marker}:start -->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${marker}:end -->`,
  ).exec(readme);
  if (!section) throw new Error(`README.md has no block between the ${marker} markers`);
  return section[1]!;
}

it("runs the README's curl tour end to end", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "runlater-tour-"));
  // Async: the server runs in this process and must keep answering while bash runs.
  const { stdout: output } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", tourScript()], {
    cwd,
    env: { ...process.env, RUNLATER_URL: server.url },
    encoding: "utf8",
  });
  const lines = output
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"));
  const [created, enqueued, dequeued, acked, looked, queue] = lines.map((l) => JSON.parse(l));
  expect(created).toMatchObject({ created: true, queue: { name: "emails" } });
  expect(enqueued.jobIds).toHaveLength(1);
  expect(dequeued.jobs[0]).toMatchObject({ jobId: enqueued.jobIds[0], body: "aGVsbG8gd29ybGQ=", attempt: 1 });
  expect(acked.results).toEqual([{ jobId: enqueued.jobIds[0], outcome: "OUTCOME_ACKNOWLEDGED" }]);
  expect(looked.jobs[0]).toMatchObject({
    state: "JOB_STATE_SUCCEEDED",
    customStatus: "sent",
    body: "aGVsbG8gd29ybGQ=",
  });
  expect(queue.queue.stats.succeeded).toBe("1");
});

it("runs the README's workflow tour end to end", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "runlater-workflow-tour-"));
  const { stdout: output } = await promisify(execFile)(
    "bash",
    ["-euo", "pipefail", "-c", tourScript("workflow-tour")],
    {
      cwd,
      env: { ...process.env, RUNLATER_URL: server.url },
      encoding: "utf8",
    },
  );
  const docs = output
    .trim()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l));
  const [, , applied, ackedExtract, ackedLoad, instance, schedule, shown] = docs;
  expect(applied).toMatchObject({ workflow: { name: "etl", version: 1 }, created: true });
  expect(ackedExtract.results[0].outcome).toBe("OUTCOME_ACKNOWLEDGED");
  expect(ackedLoad.results[0].outcome).toBe("OUTCOME_ACKNOWLEDGED");
  const load = JSON.parse(readFileSync(join(cwd, "load.json"), "utf8"));
  expect(load.jobs[0].workflow.triggeredBy[0]).toMatchObject({ fromJob: "extract", result: "cm93cz0z" });
  expect(instance.instance.state).toBe("INSTANCE_STATE_SUCCEEDED");
  expect(instance.instance.jobs.map((j: { runs: Array<{ outcome: string }> }) => j.runs[0]!.outcome)).toEqual([
    "RUN_OUTCOME_SUCCEEDED",
    "RUN_OUTCOME_SUCCEEDED",
  ]);
  expect(schedule).toMatchObject({ created: true, schedule: { name: "nightly_etl", timeZone: "Europe/Berlin" } });
  expect(shown.schedule.upcoming).toHaveLength(3);
});

it("runs the README's CLI tour end to end, a runlater work worker included", async () => {
  // From the repository's root, where npx finds the runlater bin (npm install linked it).
  const { stdout, stderr } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", tourScript("cli-tour")], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    env: { ...process.env, RUNLATER_URL: server.url },
    encoding: "utf8",
  });
  // After the curl tour, as a reader goes: the queue is there already, with its job done.
  expect(stdout).toContain("queue emails already exists; nothing changed");
  expect(stdout).toContain("sent: hello world\n"); // the command's output, copied through
  expect(stdout).toMatch(/state:\s+SUCCEEDED/);
  expect(stdout).toMatch(/custom_status:\s+sent: hello world/);
  expect(stdout).toMatch(/succeeded:\s+2\n/);
  expect(stderr).toContain("runlater work: stopped");
});
