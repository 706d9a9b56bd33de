/**
 * The web dashboard (docs/dashboard.md) in a real browser: Debian's Chromium driven by
 * playwright-core, against a server started here with the dashboard built from source.
 * What a person does with it: create a queue, enqueue, watch the counts and throughput
 * move, retry a failed job, page and filter jobs, edit a queue's config, read a job, look
 * at the cluster. Every wait is on a condition on the page, never a fixed sleep.
 * Screenshots go to .run/ui-screenshots/ (curated copies live in docs/images/).
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import type { Page } from "playwright-core";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { browserSuite, bytes, shot as shotOf, textOf } from "./browser.js";

const suite = browserSuite((uiDir) => startServer({ store: new MemoryStore(), port: 0, uiDir }));
let page: Page;
let api: {
  queues: ReturnType<typeof createClient<typeof QueueService>>;
  jobs: ReturnType<typeof createClient<typeof JobService>>;
  worker: ReturnType<typeof createClient<typeof WorkerService>>;
};

beforeAll(() => {
  const transport = createConnectTransport({ baseUrl: suite.server.url, httpVersion: "1.1" });
  api = {
    queues: createClient(QueueService, transport),
    jobs: createClient(JobService, transport),
    worker: createClient(WorkerService, transport),
  };
});
beforeEach(() => {
  page = suite.page;
});
const open = suite.open;

const stat = (key: string) => page.locator(`[data-stat="${key}"] dd`);
const overviewCount = (queue: string, state: string) =>
  page.locator(`tr[data-queue="${queue}"] [data-count="${state}"]`);
const jobIds = async () => page.locator("table.job-list tbody tr td:first-child a").allTextContents();
/**
 * The first cell of the next page has loaded: a job id (ids start with their queue's name)
 * not on the page before. Not merely "not on the page before": an empty table between the
 * pages ("(absent)") passed that, and the page was read with no rows (CI: [25, 25, 0]).
 */
const newPageOf = (before: string[]) => (first: string) => first.startsWith("bulk.") && !before.includes(first);

const shot = (name: string) => shotOf(page, name);

describe("the dashboard in Chromium", { timeout: 60_000 }, () => {
  it("loads from /ui, creates a queue, and shows counts and throughput change live as jobs are enqueued", async () => {
    const started = Date.now();
    await open("");
    // Measured and written down (docs/dashboard.md), never asserted: timings vary by machine.
    // (A string: this project's TypeScript config has no DOM types.)
    const paint = (await page.evaluate(`({
      domContentLoaded: performance.getEntriesByType("navigation")[0]?.domContentLoadedEventEnd,
      firstContentfulPaint: performance.getEntriesByName("first-contentful-paint")[0]?.startTime,
    })`)) as { domContentLoaded?: number; firstContentfulPaint?: number };
    console.log(
      `dashboard: first heading ${Date.now() - started} ms after navigation; ` +
        `DOMContentLoaded ${paint.domContentLoaded?.toFixed(0)} ms, first contentful paint ${paint.firstContentfulPaint?.toFixed(0)} ms`,
    );
    await page.getByLabel("Name").fill("emails");
    await page.getByRole("button", { name: "Create queue" }).click();
    await textOf(page.getByRole("status"), "Queue emails created.");
    await textOf(overviewCount("emails", "pending"), "0");

    // Jobs enqueued elsewhere show up without a reload (polled), and so does the rate.
    await api.jobs.enqueue({
      jobs: Array.from({ length: 40 }, (_, i) => ({ queue: "emails", body: bytes(`mail ${i}`) })),
    });
    await textOf(overviewCount("emails", "pending"), "40");
    await textOf(page.locator('tr[data-queue="emails"] td.rates'), (t) => Number.parseFloat(t.split("/")[0]!) > 0);
    await shot("overview");

    // Enqueue from the queue page's form.
    await page.getByRole("link", { name: "emails" }).click();
    await textOf(page.locator("main h1"), /^emails/);
    const enqueue = page.getByRole("form", { name: "Enqueue a job" });
    await enqueue.getByLabel("Body (text)").fill('{"to":"ada@example.com"}');
    await enqueue.getByLabel("Custom status").fill("from the dashboard");
    await enqueue.getByLabel("Copies").fill("2");
    await enqueue.getByRole("button", { name: "Enqueue" }).click();
    await textOf(page.getByRole("status").filter({ hasText: "Enqueued" }), "Enqueued 2 jobs.");
    await textOf(stat("pending"), "42");
    const counted = await api.jobs.countJobs({ queue: "emails", state: JobState.PENDING });
    expect(counted.count).toBe(42n);
  });

  it("shows a job failed by a worker and retries it from the queue page after a confirmation", async () => {
    await api.queues.createQueue({ name: "payments" });
    const [id] = (await api.jobs.enqueue({ jobs: [{ queue: "payments", body: bytes("charge 42") }] })).jobIds;
    const [job] = (await api.worker.dequeue({ queue: "payments", limit: 1 })).jobs;
    await api.worker.ack({
      queue: "payments",
      failed: [{ jobId: job!.jobId, claimToken: job!.claimToken, noRetry: true, customStatus: "card declined" }],
    });

    await open("#/queues/payments");
    await textOf(stat("failed"), "1");
    await page.getByRole("button", { name: "failed", exact: true }).click();
    await textOf(page.locator("table.job-list tbody tr"), (t) => t.includes(id!) && t.includes("card declined"));
    await page.getByRole("button", { name: "Retry failed jobs…" }).click();
    const dialog = page.getByRole("dialog", { name: "Retry failed jobs?" });
    await textOf(dialog, /1 failed jobs in payments go back to pending/);
    await shot("retry-confirm");
    await dialog.getByRole("button", { name: "Retry" }).click();
    await textOf(page.getByRole("status").filter({ hasText: "Moved" }), "Moved 1 failed jobs back to pending.");
    await textOf(stat("failed"), "0");
    await textOf(stat("pending"), "1");
    const [after] = (await api.jobs.getJobs({ jobIds: [id!] })).jobs;
    expect(after!.state).toBe(JobState.PENDING);

    // Cancelling a bulk delete deletes nothing.
    await page.getByRole("button", { name: "pending", exact: true }).click();
    await page.getByRole("button", { name: "Delete pending jobs…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect((await api.jobs.countJobs({ queue: "payments" })).count).toBe(1n);
    // Confirming does.
    await page.getByRole("button", { name: "Delete pending jobs…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await textOf(page.getByRole("status").filter({ hasText: "Deleted" }), "Deleted 1 pending jobs.");
    expect((await api.jobs.countJobs({ queue: "payments" })).count).toBe(0n);
  });

  it("pages through jobs and filters them by body, custom status and priority", async () => {
    await api.queues.createQueue({ name: "bulk" });
    const specs = Array.from({ length: 60 }, (_, i) => ({
      queue: "bulk",
      body: bytes(`job ${i}`),
      priority: i % 2 === 0 ? 1 : 2,
      customStatus: i % 20 === 0 ? "vip customer" : "",
    }));
    const enqueued = (await api.jobs.enqueue({ jobs: specs })).jobIds;

    await open("#/queues/bulk");
    const pages: string[][] = [];
    await textOf(page.locator("table.job-list tbody tr").nth(24), (t) => t !== "(absent)");
    pages.push(await jobIds());
    await page.getByRole("button", { name: "Next page" }).click();
    await textOf(page.locator(".pager span"), "Page 2");
    await textOf(page.locator("table.job-list tbody tr td:first-child").first(), newPageOf(pages[0]!));
    pages.push(await jobIds());
    await page.getByRole("button", { name: "Next page" }).click();
    await textOf(page.locator(".pager span"), "Page 3");
    await textOf(page.locator("table.job-list tbody tr td:first-child").first(), newPageOf(pages[1]!));
    pages.push(await jobIds());
    expect(pages.map((p) => p.length)).toEqual([25, 25, 10]);
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    expect(new Set(pages.flat())).toEqual(new Set(enqueued));
    await page.getByRole("button", { name: "Previous page" }).click();
    await textOf(page.locator(".pager span"), "Page 2");
    await textOf(page.locator("table.job-list tbody tr td:first-child").first(), pages[1]![0]!);

    // Body search (server side, RE2) and custom status (in the browser), with priority.
    await page.getByLabel("Body matches (RE2)").fill("^job 1[0-9]$");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await textOf(page.locator(".pager span"), "Page 1");
    await textOf(page.locator("table.job-list tbody"), (t) => t.split("pending").length - 1 === 10);
    await page.getByLabel("Body matches (RE2)").fill("");
    await page.getByLabel("Custom status contains").fill("VIP");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await textOf(page.locator("table.job-list tbody"), (t) => t.split("vip customer").length - 1 === 3);
    await shot("queue-filtered");
    await page.getByRole("form", { name: "Filters" }).getByLabel("Priority").selectOption("2");
    await page.getByRole("button", { name: "Apply filters" }).click();
    await textOf(page.locator("main"), /No jobs match/); // the vip jobs (0, 20, 40) are all priority 1
  });

  it("edits a queue's config (pause, rate limit, retry policy, retention) and shows a refused change's reason", async () => {
    await api.queues.createQueue({ name: "settings" });
    await open("#/queues/settings");
    await page.getByRole("button", { name: "Pause queue" }).click();
    await textOf(page.locator("main h1 .badge.paused"), "paused");
    await page.getByRole("button", { name: "Resume queue" }).waitFor();
    expect((await api.queues.getQueue({ name: "settings" })).queue!.config!.paused).toBe(true);

    await page.getByLabel("Rate limit").fill("5");
    await page.getByLabel("Retry: initial delay").fill("2");
    await page.getByLabel("Keep failed jobs").fill("3600");
    await page.getByRole("button", { name: "Save configuration" }).click();
    await textOf(page.locator("main h1 .badge.limited"), "≤ 5/s");
    await textOf(page.locator("form.config [role=status]"), /^Saved /);
    const config = (await api.queues.getQueue({ name: "settings" })).queue!.config!;
    expect(config.maxDequeuePerSecond).toBe(5);
    expect(config.retryPolicy!.initialDelay!.seconds).toBe(2n);
    expect(config.retryPolicy!.linearSteps).toBe(5); // sent whole, unchanged parts kept
    expect(config.failedRetention!.seconds).toBe(3600n);
    expect(config.paused).toBe(true);
    await shot("queue-config");

    await page.getByLabel("Priority levels").fill("2");
    await page.getByRole("button", { name: "Save configuration" }).click();
    await textOf(page.locator("form.config [role=alert]"), /^Refused: .*priorities/);
    expect((await api.queues.getQueue({ name: "settings" })).queue!.config!.priorities).toBe(3);

    await page.getByRole("button", { name: "Resume queue" }).click();
    await page.locator("main h1 .badge.paused").waitFor({ state: "detached" });
  });

  it("shows a job's body as JSON, text and hex, its attempts, timestamps and custom status history", async () => {
    await api.queues.createQueue({ name: "mail" });
    const body = '{"to":"ada@example.com","n":1}';
    const [id] = (await api.jobs.enqueue({ jobs: [{ queue: "mail", body: bytes(body), customStatus: "queued" }] }))
      .jobIds;
    const [job] = (await api.worker.dequeue({ queue: "mail", limit: 1 })).jobs;

    await open(`#/jobs/${encodeURIComponent(id!)}`);
    await textOf(page.locator("main h1 .badge"), "running");
    await textOf(page.locator(".details"), /Claim deadline.*\(in \d/);
    await textOf(page.locator(".details"), /Attempts1 used of 11 \(10 left\)/);
    await api.worker.ack({
      queue: "mail",
      succeeded: [{ jobId: job!.jobId, claimToken: job!.claimToken, customStatus: "sent" }],
    });
    await textOf(page.locator("main h1 .badge"), "succeeded");
    expect(
      await page.getByRole("list", { name: "Custom status history" }).getByRole("listitem").allTextContents(),
    ).toEqual(["queued", "sent"]);
    await textOf(page.getByLabel("Body as json"), /"to": "ada@example.com",\n\s+"n": 1/);
    await shot("job");
    await page.getByRole("button", { name: "Hex" }).click();
    await textOf(page.getByLabel("Body as hex"), /^00000000 {2}7b 22 74 6f 22/);
    await page.getByRole("button", { name: "Text" }).click();
    await textOf(page.getByLabel("Body as text"), body);

    await open("#/jobs/mail.0.nosuchjob");
    await textOf(page.getByRole("status"), /No such job/);
  });

  it("shows the cluster: this node's broker, the leader, its partitions and lease epochs", async () => {
    await api.queues.createQueue({ name: "wide", config: { partitions: 3 } });
    await api.jobs.enqueue({ jobs: [{ queue: "wide" }] });
    expect((await api.worker.dequeue({ queue: "wide", limit: 1 })).jobs).toHaveLength(1);
    await open("#/cluster");
    const broker = page.locator("article.broker");
    await textOf(broker.locator("h2"), /leader.*this node|this node.*leader/);
    await textOf(broker.locator("tr", { hasText: "wide" }), /#0 \(epoch [1-9]\d*.*#1.*#2/);
    await shot("cluster");
  });

  it("marks paused and rate-limited queues on the overview, with every queue's counts", async () => {
    await api.queues.updateQueue({ name: "payments", config: { paused: true }, updateMask: { paths: ["paused"] } });
    await open("");
    await textOf(page.locator('tr[data-queue="payments"] .badge.paused'), "paused");
    await textOf(page.locator('tr[data-queue="settings"] .badge.limited'), "≤ 5/s");
    await textOf(overviewCount("bulk", "pending"), "60");
    expect(await page.locator("table.queues tbody tr").count()).toBe(6); // every queue the tests above created
    await textOf(page.locator('tr[data-queue="bulk"] td.rates'), (t) => t !== "(absent)" && !t.includes("—")); // a second read gives rates
    await shot("overview-all");
  });

  it("says what went wrong when a call fails", async () => {
    await open("#/queues/no_such_queue");
    await textOf(page.getByRole("alert"), /^Not found: .*no_such_queue/);
    await open(`#/queues/${encodeURIComponent("not a name!")}`);
    await textOf(
      page.getByRole("alert"),
      'Refused: "not a name!" is not a queue name (1 to 64 letters, digits or underscores)',
    );
  });
});
