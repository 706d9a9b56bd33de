import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseWorkflowFile } from "../src/cli/workflow-file.js";
import { type CliHarness, startHarness, tableRows } from "./cli-harness.js";

let h: CliHarness;
let dir: string;
beforeAll(async () => {
  h = await startHarness();
  dir = mkdtempSync(join(tmpdir(), "runlater-cli-wf-"));
  for (const name of ["wf_extract", "wf_load"]) await h.queues.createQueue({ name });
});
afterAll(() => h.stop());

const ETL = `# a diamond-less chain, fed from outside
name: etl
jobs:
  - name: extract
    queue: wf_extract
    body: "pull"
    inputs:
      - external: files_ready
  - name: load
    queue: wf_load
    inputs: [extract]
    on_failure: continue
    priority: 2
    attempts: 4
`;

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe("workflow definition files", () => {
  it("read every field, and inputs as a job name, {job, seed} or {external}", () => {
    const w = parseWorkflowFile(`
name: loop
jobs:
  - name: a
    queue: q
    body_base64: AAE=
    inputs: [b, {job: c, seed: true}, {external: go}]
`);
    expect(w.jobs[0]!.body).toEqual(new Uint8Array([0, 1]));
    expect(w.jobs[0]!.inputs.map((i) => [i.source.case, i.source.value, i.seed])).toEqual([
      ["job", "b", false],
      ["job", "c", true],
      ["external", "go", false],
    ]);
  });

  it("name the place of a mistake", () => {
    expect(() => parseWorkflowFile("name: x\njobs: []")).toThrow(/jobs: give a list of at least one job/);
    expect(() => parseWorkflowFile("name: x\njobs:\n  - name: a\n    queue: q\n    retries: 3")).toThrow(
      /jobs\[0\]: unknown key "retries"/,
    );
    expect(() =>
      parseWorkflowFile("name: x\njobs:\n  - name: a\n    queue: q\n    inputs: [{job: b, external: c}]"),
    ).toThrow(/jobs\[0\]\.inputs\[0\]: give a job name/);
    expect(() => parseWorkflowFile("name: x\njobs:\n  - name: a\n    queue: q\n    on_failure: retry")).toThrow(
      /jobs\[0\]\.on_failure: give abort or continue/,
    );
  });
});

describe("runlater workflow", () => {
  it("applies a file once, then says it is unchanged", async () => {
    const path = file("etl.yaml", ETL);
    const first = await h.run(["workflow", "apply", path]);
    expect(first).toMatchObject({ code: 0, stdout: "applied workflow etl: version 1 (2 jobs)\n" });
    const again = await h.run(["workflow", "apply", path]);
    expect(again.stdout).toBe("workflow etl is unchanged at version 1\n");
    const list = await h.run(["workflow", "list"]);
    expect(
      tableRows(list.stdout)
        .find((r) => r[0] === "etl")
        ?.slice(1, 3),
    ).toEqual(["1", "2"]);
  });

  it("refuses a bad file as a usage error and passes on the server's refusal", async () => {
    const bad = await h.run(["workflow", "apply", file("bad.yaml", "name: x\njobs: [{name: a}]\n")]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.yaml: jobs\[0\]\.queue: expected text/);
    const missing = await h.run(["workflow", "apply", join(dir, "nope.yaml")]);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toMatch(/cannot read .*nope\.yaml: ENOENT/);
    const server = await h.run(["workflow", "apply", file("q.yaml", "name: x\njobs: [{name: a, queue: ghost}]\n")]);
    expect(server.code).toBe(1);
    expect(server.stderr).toMatch(/^error: not_found: queue "ghost" does not exist/);
  });

  it("starts with events, shows the tree with run counts and outcomes, lists, steers and cancels", async () => {
    await h.run(["workflow", "apply", file("etl.yaml", ETL)]);
    // Kept open: disabling its only runnable job below must not end it.
    const started = await h.run(["workflow", "start", "etl", "--event", "files_ready=day-1", "--keep-open"]);
    expect(started.code).toBe(0);
    const id = started.stdout.trim();

    const { jobs } = await h.workers.dequeue({ queue: "wf_extract", limit: 1 });
    expect(new TextDecoder().decode(jobs[0]!.workflow!.triggeredBy[0]!.result)).toBe("day-1");
    await h.workers.ack({
      queue: "wf_extract",
      succeeded: [{ jobId: jobs[0]!.jobId, claimToken: jobs[0]!.claimToken, customStatus: "3 files" }],
    });

    const shown = await h.run(["workflow", "show", id]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.split("\n");
    expect(lines[0]).toMatch(new RegExp(`^instance ${id}: workflow etl v1, running, kept open \\(started `));
    expect(lines[1]).toMatch(
      /^extract {2}WAITING {2}runs 1 {2}last: #1 succeeded "3 files" at .* \(job wf_extract\.0\./,
    );
    expect(lines[2]).toMatch(/^└── load {2}RUNNABLE {2}runs 1 {2}last: #1 queued \(job wf_load\./);

    const instances = await h.run(["workflow", "instances", "etl", "--state", "running"]);
    expect(tableRows(instances.stdout).map((r) => r[0])).toContain(id);
    expect((await h.run(["workflow", "instances", "--state", "done"])).code).toBe(2);

    expect((await h.run(["workflow", "disable", id, "load"])).stdout).toBe(
      `disabled ${id} load: instance is running\n`,
    );
    expect((await h.run(["workflow", "show", id])).stdout).toMatch(/└── load {2}DISABLED/);
    await h.run(["workflow", "enable", id, "load"]);
    const rerun = await h.run(["workflow", "rerun", id, "extract", "1", "--json"]);
    expect(JSON.parse(rerun.stdout).instance.instanceId).toBe(id);
    expect((await h.run(["workflow", "rerun", id, "extract", "x"])).code).toBe(2);

    const cancelled = await h.run(["workflow", "cancel", id]);
    expect(cancelled.stdout).toBe(`cancelled ${id}: instance is cancelled\n`);
    const missing = await h.run(["workflow", "show", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: workflow instance "nope" does not exist/);
  });

  it("closes an instance started --keep-open", async () => {
    await h.run(["workflow", "apply", file("etl.yaml", ETL)]);
    const id = (await h.run(["workflow", "start", "etl", "--keep-open"])).stdout.trim();
    expect((await h.run(["workflow", "show", id])).stdout).toMatch(/running, kept open/);
    expect((await h.run(["workflow", "close", id])).stdout).toBe(`closed ${id}: instance is succeeded\n`);
  });
});
