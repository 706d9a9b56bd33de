/**
 * The dashboard's workflow and schedule pages (docs/dashboard.md) in Chromium, against a
 * server started here: an instance's graph follows its jobs as a TypeScript SDK worker
 * takes and finishes them; a run is re-run and a job disabled from the page; instances
 * are filtered and one is cancelled; an event is posted to an external input; schedules
 * show their next fire times and are paused and resumed.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createRunlaterClient, type RunlaterClient, Worker } from "@runlater/sdk";
import { OverlapPolicy, ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { InstanceJobState, InstanceState, WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { browserSuite, shot, textOf } from "./browser.js";

const suite = browserSuite((uiDir) => startServer({ store: new MemoryStore(), port: 0, uiDir }));
let page: Page;
let client: RunlaterClient;
let workflows: ReturnType<typeof createClient<typeof WorkflowService>>;
let schedules: ReturnType<typeof createClient<typeof ScheduleService>>;

const job = (name: string) => ({ source: { case: "job" as const, value: name } });
const external = (name: string) => ({ source: { case: "external" as const, value: name } });

beforeAll(async () => {
  client = createRunlaterClient(suite.server.url);
  const transport = createConnectTransport({ baseUrl: suite.server.url, httpVersion: "1.1" });
  workflows = createClient(WorkflowService, transport);
  schedules = createClient(ScheduleService, transport);
  for (const queue of ["wf_extract", "wf_transform", "wf_load"]) await client.createQueue(queue);
  // files_ready → extract → transform → load
  await workflows.applyWorkflow({
    workflow: {
      name: "etl",
      jobs: [
        { name: "extract", queue: "wf_extract", inputs: [external("files_ready")] },
        { name: "transform", queue: "wf_transform", inputs: [job("extract")] },
        { name: "load", queue: "wf_load", inputs: [job("transform")] },
      ],
    },
  });
});

afterAll(() => client?.close());
beforeEach(() => {
  page = suite.page;
});
const open = suite.open;
const node = (name: string) => page.locator(`svg.graph g.job[data-job="${name}"]`);
const look = async (name: string, want: string) => {
  await page.locator(`svg.graph g.job[data-job="${name}"][data-look="${want}"]`).waitFor();
};
/** Clicks "`action`…", then `action` in the confirmation dialog titled `question`. */
const confirmed = async (action: string, question: string) => {
  await page.getByRole("button", { name: `${action}…` }).click();
  await page.getByRole("dialog", { name: question }).getByRole("button", { name: action }).click();
};

/** A worker on `queue` whose every job waits until the test lets it finish. */
function gatedWorker(queue: string) {
  const gates: Array<() => void> = [];
  const worker = new Worker({
    client,
    queue,
    dequeueMode: "poll",
    pollWaitMs: 200,
    handler: (j) => new Promise<string>((resolve) => gates.push(() => resolve(`done ${j.workflow?.run}`))),
  });
  worker.start();
  return {
    worker,
    /** Lets the oldest held job finish (waits for one to be held). */
    async finishOne(): Promise<void> {
      await expect.poll(() => gates.length, { timeout: 10_000 }).toBeGreaterThan(0);
      gates.shift()!();
    },
  };
}

describe("workflow and schedule pages in Chromium", { timeout: 60_000 }, () => {
  it("shows an instance's graph follow a worker, re-runs a run and disables a job from the page", async () => {
    // Kept open: disabling its only runnable job would otherwise end it (nothing left to run).
    const { instance } = await workflows.startInstance({
      workflow: "etl",
      events: [{ input: "files_ready" }],
      keepOpen: true,
    });
    const id = instance!.instanceId;
    const extract = gatedWorker("wf_extract");
    try {
      await open(`#/instances/${encodeURIComponent(id)}`);
      await textOf(page.locator("main h1 .badge"), "running");
      await look("extract", "running");
      await look("transform", "waiting");
      expect(await page.locator("svg.graph g.external").textContent()).toContain("files_ready");

      await extract.finishOne(); // the worker acks: extract succeeded, transform runnable, live
      await look("extract", "succeeded");
      await look("transform", "runnable");
      const runs = page.getByRole("table", { name: "Runs of extract" });
      await textOf(runs.locator("tr[data-run='1']"), (t) => t.includes("succeeded") && t.includes("done 1"));
      expect(await runs.locator("tr[data-run='1']").textContent()).toContain("external:files_ready");
      await shot(page, "instance-graph");

      // Re-run extract's first run: its triggering event goes back, a second run starts.
      await runs.locator("tr[data-run='1']").getByRole("button", { name: "Re-run" }).click();
      await textOf(
        page.getByRole("status").filter({ hasText: "Posted" }),
        "Posted the events of run 1 of extract again.",
      );
      await look("extract", "running");
      await textOf(runs.locator("tr[data-run='2']"), /queued/);
      await extract.finishOne();
      await textOf(runs.locator("tr[data-run='2']"), /succeeded/);

      // Disable transform from its node, then enable it again.
      await node("transform").click();
      const transform = page.getByRole("article", { name: "Job transform" });
      await transform.getByRole("button", { name: "Disable job" }).click();
      await look("transform", "disabled");
      const disabled = await workflows.getInstance({ instanceId: id });
      expect(disabled.instance!.jobs.find((j) => j.name === "transform")!.state).toBe(InstanceJobState.DISABLED);
      await transform.getByRole("button", { name: "Enable job" }).click();
      await look("transform", "runnable");
    } finally {
      await extract.worker.stop();
    }
  });

  it("lists workflows and instances by state, cancels one after a confirmation, and posts to an external input", async () => {
    const waiting = (await workflows.startInstance({ workflow: "etl", keepOpen: true })).instance!.instanceId;
    await open("#/workflows");
    await textOf(page.locator('tr[data-workflow="etl"]'), /etl\s*1\s*3: extract, transform, load/);
    await page.getByRole("link", { name: "etl" }).first().click();
    await textOf(page.locator("main h1"), "etl");
    await page.locator('svg.graph g.job[data-job="load"]').waitFor(); // the definition's graph
    await page.getByRole("form", { name: "Instance filters" }).getByLabel("State").selectOption({ label: "running" });
    await textOf(page.getByRole("table", { name: "Instances" }), (t) => t.includes(waiting));
    await shot(page, "workflows");

    // Post the external event the kept-open instance waits for: extract becomes runnable.
    await page.getByRole("link", { name: waiting }).click();
    await look("extract", "waiting");
    const post = page.getByRole("form", { name: "Post an event" });
    await post.getByLabel("Custom status").fill("from the dashboard");
    await post.getByRole("button", { name: "Post event" }).click();
    await textOf(post.getByRole("status"), "Posted an event to files_ready.");
    await look("extract", "runnable");

    await confirmed("Cancel instance", "Cancel this instance?");
    await textOf(page.locator("main h1 .badge"), "cancelled");
    expect((await workflows.getInstance({ instanceId: waiting })).instance!.state).toBe(InstanceState.CANCELLED);
    expect(await page.getByRole("button", { name: "Cancel instance…" }).count()).toBe(0);

    await open("#/workflows");
    await page.getByRole("form", { name: "Instance filters" }).getByLabel("State").selectOption({ label: "cancelled" });
    await textOf(page.getByRole("table", { name: "Instances" }), (t) => t.includes(waiting) && !t.includes("running"));
  });

  it("closes an instance started keep-open after a confirmation, and it ends", async () => {
    const kept = (await workflows.startInstance({ workflow: "etl", keepOpen: true })).instance!.instanceId;
    await open(`#/instances/${encodeURIComponent(kept)}`);
    await look("extract", "waiting");
    await confirmed("Close instance", "Close this instance?");
    // Nothing was runnable or running: it ends at once.
    await textOf(page.locator("main h1 .badge"), (t) => t !== "" && t !== "running");
    const closed = (await workflows.getInstance({ instanceId: kept })).instance!;
    expect(closed.state).not.toBe(InstanceState.RUNNING);
    expect(closed.keepOpen).toBe(false);
    expect(await page.getByRole("button", { name: "Close instance…" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Cancel instance…" }).count()).toBe(0);
  });

  it("creates a schedule from its form, and shows the server's reason for a cron it cannot parse", async () => {
    await open("#/schedules");
    const form = page.getByRole("form", { name: "Create a schedule" });
    await form.getByLabel("Name").fill("hourly_etl");
    await form.getByLabel("Cron").fill("not a cron");
    await form.getByLabel("Time zone").fill("Europe/Berlin");
    await form.getByLabel("Workflow", { exact: true }).fill("etl");
    await form.getByLabel("While the previous one runs").selectOption({ label: "start another" });
    await form.getByRole("button", { name: "Create schedule" }).click();
    await textOf(form.getByRole("alert"), /cron/i);
    await form.getByLabel("Cron").fill("0 * * * *");
    await form.getByRole("button", { name: "Create schedule" }).click();
    await textOf(form.getByRole("status"), "Schedule hourly_etl created.");
    const row = page.locator('tr[data-schedule="hourly_etl"]');
    await textOf(row, (t) => t.includes("0 * * * *") && t.includes("Europe/Berlin") && t.includes("workflow etl"));
    const created = (await schedules.getSchedule({ name: "hourly_etl" })).schedule!;
    expect(created.overlap).toBe(OverlapPolicy.ALLOW);
    expect(created.target.case).toBe("workflow");
  });

  it("shows schedules with their next fire times, and pauses and resumes one", async () => {
    await schedules.createSchedule({
      schedule: {
        name: "nightly_etl",
        cron: "0 2 * * *",
        timeZone: "Europe/Berlin",
        target: { case: "workflow", value: { workflow: "etl" } },
      },
    });
    await open("#/schedules");
    const row = page.locator('tr[data-schedule="nightly_etl"]');
    await textOf(row, (t) => t.includes("0 2 * * *") && t.includes("Europe/Berlin") && t.includes("workflow etl"));
    // 02:00 in Berlin is hours away, or minutes (CI once ran this at 00:27 UTC: "in 32 min 45 s").
    await textOf(row.locator(".next-fire"), /^\d{4}-\d\d-\d\d \d\d:00:00 \(in \d+ (h|min|s)\b/);
    await row.getByRole("button", { name: "Pause nightly_etl" }).click();
    await textOf(row.locator(".badge.paused"), "paused");
    await textOf(row.locator(".next-fire"), "— (paused)");
    expect((await schedules.getSchedule({ name: "nightly_etl" })).schedule!.paused).toBe(true);

    await row.getByRole("link", { name: "nightly_etl" }).click();
    await textOf(page.locator("main"), /None while paused/);
    await page.getByRole("button", { name: "Resume nightly_etl" }).click();
    const upcoming = page.getByRole("list", { name: "Next fire times" }).getByRole("listitem");
    await expect.poll(() => upcoming.count()).toBe(10);
    const resumed = (await schedules.getSchedule({ name: "nightly_etl", upcoming: 1 })).schedule!;
    expect(resumed.paused).toBe(false);
    // The browser shows local time, as this process does (same machine, same TZ).
    expect(await upcoming.first().textContent()).toContain(localTime(Number(resumed.nextFireAt!.seconds) * 1000));
    expect(await upcoming.first().textContent()).toMatch(/ 02:00:00 Europe\/Berlin$/); // and in the schedule's zone
    await shot(page, "schedule");
  });
});

function localTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}
