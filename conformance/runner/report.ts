/** The runner's outputs: the console table and the JSON or JUnit report for CI. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

export type Status = "pass" | "fail" | "known-failing" | "unexpected-pass";

export interface CaseResult {
  sdk: string;
  store: string;
  protocol: string;
  scenario: string;
  status: Status;
  ms: number;
  /** Why it failed (or the known-failing reason). */
  message?: string;
}

export const caseName = (r: Pick<CaseResult, "store" | "protocol" | "scenario">) =>
  `${r.store}/${r.protocol}/${r.scenario}`;

/** pass and known-failing count as passed; fail and unexpected-pass as failed. */
export const isFailure = (s: Status) => s === "fail" || s === "unexpected-pass";

export function printTable(results: CaseResult[], scenarios: string[], out: (s: string) => void): void {
  const columns = [...new Set(results.map((r) => `${r.sdk}:${r.protocol}`))];
  const stores = [...new Set(results.map((r) => r.store))];
  const width = Math.max(8, ...scenarios.map((s) => s.length));
  for (const store of stores) {
    out(`\nstore ${store}`);
    out(`${"scenario".padEnd(width)}  ${columns.map((c) => c.padEnd(Math.max(c.length, 5))).join("  ")}`);
    for (const s of scenarios) {
      const cells = columns.map((c) => {
        const r = results.find((x) => x.store === store && `${x.sdk}:${x.protocol}` === c && x.scenario === s);
        const mark = !r
          ? "-"
          : r.status === "pass"
            ? "ok"
            : r.status === "known-failing"
              ? "xfail"
              : r.status === "fail"
                ? "FAIL"
                : "XPASS";
        return mark.padEnd(Math.max(c.length, 5));
      });
      out(`${s.padEnd(width)}  ${cells.join("  ")}`);
    }
  }
}

/** @param suite the JUnit suites' name prefix: "conformance", or "conformance-secure" for a run with auth and TLS */
export function writeReport(path: string, results: CaseResult[], totalMs: number, suite = "conformance"): void {
  mkdirSync(dirname(path), { recursive: true });
  if (path.endsWith(".json")) {
    const failed = results.filter((r) => isFailure(r.status)).length;
    writeFileSync(
      path,
      `${JSON.stringify({ passed: results.length - failed, failed, durationMs: totalMs, results }, null, 2)}\n`,
    );
    return;
  }
  // JUnit XML: one <testsuite> per sdk × store × protocol; known failures are <skipped>.
  const esc = (s: string) =>
    s.replace(/[<>&"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;" })[c]!);
  const groups = new Map<string, CaseResult[]>();
  for (const r of results) {
    const key = `${r.sdk}/${r.store}/${r.protocol}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const suites = [...groups].map(([key, rs]) => {
    const failures = rs.filter((r) => isFailure(r.status)).length;
    const skipped = rs.filter((r) => r.status === "known-failing").length;
    const time = (rs.reduce((n, r) => n + r.ms, 0) / 1000).toFixed(3);
    const cases = rs.map((r) => {
      const inner =
        r.status === "fail" || r.status === "unexpected-pass"
          ? `<failure message="${esc((r.message ?? "").split("\n")[0]!.slice(0, 200))}">${esc(r.message ?? "")}</failure>`
          : r.status === "known-failing"
            ? `<skipped message="${esc(`known failing: ${r.message ?? ""}`)}"/>`
            : "";
      return `    <testcase classname="${suite}.${esc(key.replace(/\//g, "."))}" name="${esc(r.scenario)}" time="${(r.ms / 1000).toFixed(3)}">${inner}</testcase>`;
    });
    return `  <testsuite name="${suite}/${esc(key)}" tests="${rs.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${time}">\n${cases.join("\n")}\n  </testsuite>`;
  });
  writeFileSync(
    path,
    `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="runlater ${suite}" time="${(totalMs / 1000).toFixed(3)}">\n${suites.join("\n")}\n</testsuites>\n`,
  );
}
