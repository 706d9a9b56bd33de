/**
 * The dashboard against a server with auth on (docs/security.md, docs/dashboard.md): it
 * asks for a token and says why when one is refused; an admin token sees every button; a
 * read-only token reads every page but sees no button its scopes do not allow; a token
 * revoked while in use brings the sign-in form back with the server's reason.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { TokenService } from "@runlater/sdk/gen/token_service_pb.js";
import { WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import type { Page } from "playwright-core";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { newToken } from "../../server/src/domain/tokens.js";
import { startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { browserSuite, shot, textOf } from "./browser.js";

const admin = newToken({ name: "boot", scopes: ["admin"], queues: [], now: 0, expiresAt: 0 }).token;
const suite = browserSuite((uiDir) =>
  startServer({ store: new MemoryStore(), port: 0, uiDir, auth: { bootstrapToken: admin } }),
);
let page: Page;
let tokens: ReturnType<typeof createClient<typeof TokenService>>;
let instanceId: string;

beforeAll(async () => {
  const transport = createConnectTransport({
    baseUrl: suite.server.url,
    httpVersion: "1.1",
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", `Bearer ${admin}`);
        return next(req);
      },
    ],
  });
  tokens = createClient(TokenService, transport);
  await createClient(QueueService, transport).createQueue({ name: "orders" });
  await createClient(JobService, transport).enqueue({ jobs: [{ queue: "orders" }, { queue: "orders" }] });
  const workflows = createClient(WorkflowService, transport);
  await workflows.applyWorkflow({
    workflow: { name: "billing", jobs: [{ name: "invoice", queue: "orders", inputs: [] }] },
  });
  instanceId = (await workflows.startInstance({ workflow: "billing", keepOpen: true })).instance!.instanceId;
  await createClient(ScheduleService, transport).createSchedule({
    schedule: { name: "hourly_billing", cron: "@hourly", target: { case: "workflow", value: { workflow: "billing" } } },
  });
});
beforeEach(() => {
  page = suite.page;
});

async function signIn(token: string): Promise<void> {
  const form = page.getByRole("form", { name: "Sign in" });
  await form.getByLabel("API token").fill(token);
  await form.getByRole("button", { name: "Sign in" }).click();
}

/** Opens a page of the dashboard in the signed-in tab and waits for its heading. */
async function visit(hash: string, heading: string | RegExp): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  await textOf(page.locator("main h1"), heading);
}

/** The buttons and forms that change something, by page: none may show for a read-only token. */
const GUARDED: Array<{ hash: string; heading: string | RegExp; controls: (p: Page) => ReturnType<Page["locator"]>[] }> =
  [
    {
      hash: "#/",
      heading: "Queues",
      controls: (p) => [p.getByRole("form", { name: "Create a queue" })],
    },
    {
      hash: "#/queues/orders",
      heading: /^orders/,
      controls: (p) => [
        p.getByRole("button", { name: "Pause queue" }),
        p.getByRole("button", { name: "Save configuration" }),
        p.getByRole("form", { name: "Enqueue a job" }),
      ],
    },
    {
      hash: "", // the instance page (its id is known once created)
      heading: /running/,
      controls: (p) => [
        p.getByRole("button", { name: "Cancel instance…" }),
        p.getByRole("button", { name: "Close instance…" }), // it was started keep-open
        p.getByRole("button", { name: "Disable job" }),
        p.getByRole("button", { name: "Re-run" }),
      ],
    },
    {
      hash: "#/schedules",
      heading: "Schedules",
      controls: (p) => [
        p.getByRole("button", { name: "Pause hourly_billing" }),
        p.getByRole("form", { name: "Create a schedule" }),
      ],
    },
  ];
const guarded = () => GUARDED.map((g) => ({ ...g, hash: g.hash || `#/instances/${instanceId}` }));

describe("the dashboard with auth on", { timeout: 60_000 }, () => {
  it("asks for a token, says why one is refused, and signs an admin token in with every button", async () => {
    await page.goto(`${suite.server.url}/ui/`);
    await textOf(page.locator("main h1"), "Sign in");
    await textOf(page.locator("main"), /This server runs with auth: every call needs an API token/);
    expect(await page.getByRole("alert").count()).toBe(0); // no token tried yet: nothing went wrong
    expect(await page.getByRole("navigation", { name: "Main" }).count()).toBe(0);
    await shot(page, "login");

    await signIn("rl_000000000000_not-a-real-secret-not-a-real-secret-xxxxxxxx");
    await textOf(page.getByRole("alert"), /^Not signed in: the token is not valid/);

    await signIn(admin);
    await textOf(page.locator("header .who"), /^bootstrap admin \(admin, read, enqueue, work\)/);
    for (const g of guarded()) {
      await visit(g.hash, g.heading);
      for (const control of g.controls(page)) await control.first().waitFor();
    }
    // A reload keeps the tab signed in (sessionStorage); signing out forgets the token.
    await page.reload();
    await textOf(page.locator("header .who"), /^bootstrap admin/);
    await page.getByRole("button", { name: "Sign out" }).click();
    await textOf(page.locator("main h1"), "Sign in");
    await page.reload();
    await textOf(page.locator("main h1"), "Sign in");
  });

  it("shows a read-only token every page and no button its scopes do not allow", async () => {
    const { secretToken } = await tokens.createToken({ name: "dashboard", scopes: ["read"] });
    await page.goto(`${suite.server.url}/ui/`);
    await signIn(secretToken);
    await textOf(page.locator("header .who"), /^dashboard \(read\)/);
    await textOf(page.locator('tr[data-queue="orders"] [data-count="pending"]'), "3"); // two, and the instance's run
    for (const g of guarded()) {
      await visit(g.hash, g.heading);
      await page.locator("main table").first().waitFor(); // the page's data has arrived
      for (const control of g.controls(page)) expect(await control.count(), `${g.hash}: ${control}`).toBe(0);
    }
    await visit(`#/instances/${instanceId}`, /running/);
    await page.locator('svg.graph g.job[data-job="invoice"][data-look="runnable"]').waitFor();
    await shot(page, "read-only-instance");
  });

  it("brings the sign-in form back with the reason when the token in use is revoked", async () => {
    const { secretToken, token } = await tokens.createToken({ name: "short lived", scopes: ["read"] });
    await page.goto(`${suite.server.url}/ui/#/cluster`);
    await signIn(secretToken);
    await textOf(page.locator("main h1"), "Cluster");
    await tokens.revokeToken({ tokenId: token!.tokenId });
    await textOf(page.locator("main h1"), "Sign in"); // the next poll is refused
    await textOf(page.getByRole("alert"), /^Not signed in: the token is not valid/);
  });
});
