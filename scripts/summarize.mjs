#!/usr/bin/env node
// Sums every suite's results into one closing line `N passed, N failed`.
// Reads .run/reports/: one sub-directory per suite holding vitest JSON reports or JUnit
// XML (pytest, Maven Surefire), and checks.txt (one "pass NAME" / "fail NAME" a line).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2] ?? ".run/reports";
let passed = 0;
let failed = 0;
let skipped = 0;
const rows = [];
// Names of failed cases, printed next to the table so the end of a CI log says what failed.
const failures = [];
const add = (suite, p, f, s = 0) => {
  passed += p;
  failed += f;
  skipped += s;
  rows.push(
    `${suite.padEnd(28)} ${String(p).padStart(5)} passed ${String(f).padStart(4)} failed ${String(s).padStart(4)} skipped`,
  );
};
const firstLine = (text) => (text ?? "").trim().split("\n")[0].slice(0, 300);

/** Counts of one report file: [passed, failed, skipped]. */
function count(path) {
  if (path.endsWith(".json")) {
    const r = JSON.parse(readFileSync(path, "utf8"));
    let failed = (r.numFailedTests ?? 0) + (r.numRuntimeErrorTestSuites ?? 0);
    if (r.success === false && failed === 0) failed = 1; // e.g. a file that failed to load
    for (const file of r.testResults ?? []) {
      if (file.status === "failed" && !(file.assertionResults ?? []).some((t) => t.status === "failed"))
        failures.push(`${file.name}: ${firstLine(file.message)}`);
      for (const t of file.assertionResults ?? [])
        if (t.status === "failed") failures.push(`${t.fullName}: ${firstLine(t.failureMessages?.[0])}`);
    }
    return [r.numPassedTests ?? 0, failed, (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0)];
  }
  if (path.endsWith(".xml")) {
    const xml = readFileSync(path, "utf8");
    let t = 0,
      f = 0,
      s = 0;
    // Only leaf <testsuite> elements carry counts we want once (pytest wraps them in <testsuites>).
    for (const m of xml.matchAll(/<testsuite\b([^>]*)>/g)) {
      const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(m[1])?.[1] ?? 0);
      t += attr("tests");
      f += attr("failures") + attr("errors");
      s += attr("skipped");
    }
    // A failed <testcase>: one holding a <failure> or <error> element.
    for (const m of xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)) {
      const failure = /<(failure|error)\b([^>]*)/.exec(m[2] ?? "");
      if (!failure) continue;
      const name = /\bname="([^"]*)"/.exec(m[1])?.[1] ?? "?";
      const cls = /\bclassname="([^"]*)"/.exec(m[1])?.[1];
      failures.push(`${cls ? `${cls} ` : ""}${name}: ${firstLine(/\bmessage="([^"]*)"/.exec(failure[2])?.[1])}`);
    }
    return [t - f - s, f, s];
  }
  return [0, 0, 0];
}

// One suite per sub-directory of the reports dir (e.g. ts/, sdk-python/, sdk-java/).
const entries = existsSync(dir)
  ? readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))
  : [];
for (const entry of entries.filter((e) => e.isDirectory())) {
  const totals = [0, 0, 0];
  for (const file of readdirSync(join(dir, entry.name))) {
    for (const [i, n] of count(join(dir, entry.name, file)).entries()) totals[i] += n;
  }
  add(entry.name, ...totals);
}
const checks = join(dir, "checks.txt");
if (existsSync(checks)) {
  const lines = readFileSync(checks, "utf8").split("\n").filter(Boolean);
  add("checks", lines.filter((l) => l.startsWith("pass ")).length, lines.filter((l) => l.startsWith("fail ")).length);
  for (const l of lines.filter((l) => l.startsWith("fail "))) rows.push(`  failed: ${l.slice(5)}`);
}
if (failures.length) {
  console.log("failed cases:");
  for (const f of failures.slice(0, 50)) console.log(`  ${f}`);
  if (failures.length > 50) console.log(`  … and ${failures.length - 50} more`);
}
console.log(rows.join("\n"));
// The last line is always "N passed, N failed" (what CI reads); skipped cases (the
// conformance cases listed as known to fail, which still run) are counted on the line before.
if (skipped) console.log(`${skipped} skipped`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
