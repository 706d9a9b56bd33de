/**
 * The CI summary (scripts/summarize.mjs): its closing line counts every suite, and the
 * failed cases are named just above the table, since only the end of a CI log is kept.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

const script = join(dirname(fileURLToPath(import.meta.url)), "../../scripts/summarize.mjs");
const scratch = mkdtempSync(join(tmpdir(), "runlater-summary-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function summarize(files: Record<string, string>): { lines: string[]; status: number | null } {
  const dir = mkdtempSync(join(scratch, "reports-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const run = spawnSync(process.execPath, [script, dir], { encoding: "utf8" });
  return { lines: run.stdout.trim().split("\n"), status: run.status };
}

const vitestReport = JSON.stringify({
  numPassedTests: 1,
  numFailedTests: 1,
  success: false,
  testResults: [
    {
      name: "/repo/a.test.ts",
      status: "failed",
      assertionResults: [
        { fullName: "queue keeps order", status: "passed" },
        { fullName: "queue drops nothing", status: "failed", failureMessages: ["AssertionError: 1 != 2\n    at x"] },
      ],
    },
  ],
});
const junitReport = `<testsuites><testsuite tests="3" failures="1" errors="0" skipped="1">
<testcase classname="sdk.Worker" name="stops"/>
<testcase classname="sdk.Worker" name="skips"><skipped/></testcase>
<testcase classname="sdk.Worker" name="retries"><failure message="expected 3 attempts">trace</failure></testcase>
</testsuite></testsuites>`;

it("names each failed case with the first line of its message, then ends with the totals", () => {
  const { lines, status } = summarize({ "ts/vitest.json": vitestReport, "java/junit.xml": junitReport });
  expect(status).toBe(1);
  expect(lines).toContain("  queue drops nothing: AssertionError: 1 != 2");
  expect(lines).toContain("  sdk.Worker retries: expected 3 attempts");
  expect(lines.filter((l) => l.startsWith("  ")).length).toBe(2);
  expect(lines.at(-2)).toBe("1 skipped");
  expect(lines.at(-1)).toBe("2 passed, 2 failed");
});

it("passes with no failed-cases section when everything passed", () => {
  const { lines, status } = summarize({ "checks.txt": "pass typecheck\npass build\n" });
  expect(status).toBe(0);
  expect(lines.join("\n")).not.toContain("failed cases");
  expect(lines.at(-1)).toBe("2 passed, 0 failed");
});
