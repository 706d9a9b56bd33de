/**
 * What the dashboard's browser tests share: the dashboard built from source into a
 * temporary directory, Debian's Chromium launched through playwright-core with a fresh
 * profile, waits on what the page shows (never a fixed sleep), and screenshots in
 * .run/ui-screenshots/ (curated copies live in docs/images/).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect } from "vitest";
import type { RunningServer } from "../../server/src/server.js";
import { chromiumPath } from "../../server/test/services.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const shots = join(root, ".run/ui-screenshots");
export const WAIT_MS = 15_000;

interface Browser {
  /** Where the built dashboard is (pass as the server's uiDir). */
  build: string;
  context: BrowserContext;
  close(): Promise<void>;
}

/** Builds the dashboard and starts Chromium; close() removes both. */
async function launch(): Promise<Browser> {
  const build = mkdtempSync(join(tmpdir(), "runlater-ui-build-"));
  execFileSync(process.execPath, [join(root, "server/ui/build.mjs"), "--out", build], { stdio: "ignore" });
  mkdirSync(shots, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "runlater-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 860 },
  });
  context.setDefaultTimeout(WAIT_MS);
  return {
    build,
    context,
    async close() {
      await context.close();
      for (const dir of [profile, build]) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface BrowserSuite {
  readonly server: RunningServer;
  /** This test's page: a fresh one for each test; a test fails on any uncaught error in it. */
  readonly page: Page;
  /** Opens the dashboard at `hash` (e.g. "#/queues/emails") and waits for the page's heading. */
  open(hash: string): Promise<void>;
}

/**
 * Registers a file's hooks: the dashboard built and Chromium started before its tests,
 * the server `start` makes (serving that build) likewise, a fresh page per test, and all
 * of it closed after.
 */
export function browserSuite(start: (uiDir: string) => Promise<RunningServer>): BrowserSuite {
  let browser: Browser | undefined;
  let server: RunningServer | undefined;
  let page: Page | undefined;
  const errors: string[] = [];
  beforeAll(async () => {
    browser = await launch();
    server = await start(browser.build);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });
  beforeEach(async () => {
    await page?.close();
    page = await browser!.context.newPage();
    errors.length = 0;
    page.on("pageerror", (err) => errors.push(err.message));
    return () => expect(errors, "uncaught errors in the page").toEqual([]);
  });
  return {
    get server() {
      return server!;
    },
    get page() {
      return page!;
    },
    open: (hash) => open(page!, `${server!.url}/ui/${hash}`),
  };
}

/** Goes to `url` and waits for the page's heading. */
export async function open(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.locator("main h1").first().waitFor();
}

/** Waits until the locator's text satisfies `ok`; fails with the last text seen. */
export async function textOf(l: Locator, ok: string | RegExp | ((t: string) => boolean)): Promise<string> {
  const test = typeof ok === "string" ? (t: string) => t === ok : ok instanceof RegExp ? (t: string) => ok.test(t) : ok;
  const deadline = Date.now() + WAIT_MS;
  let last = "";
  for (;;) {
    last = (await l.count()) > 0 ? ((await l.first().textContent()) ?? "").trim() : "(absent)";
    if (test(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out waiting on ${l}: last text "${last}"`);
    await l.page().waitForTimeout(50);
  }
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
}

export function bytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}
