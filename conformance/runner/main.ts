/**
 * The conformance runner: for each store, starts a runlater server with test control;
 * for each SDK driver and each wire protocol it offers, runs every scenario (Reset
 * between scenarios), matches every result, and prints a table and `N passed, N failed`.
 *
 *   npx tsx conformance/runner/main.ts [--sdk ts,python,java] [--store memory --store redis://…]
 *       [--protocol grpc,…] [--scenario glob] [--report out.xml|out.json] [--secure] [--verbose]
 *       [--scenarios-dir dir] [--known-failing-dir dir]     (the runner's own tests use these)
 *
 * --secure runs every server with auth and TLS (runner/secure.ts) and gives the drivers the
 * admin token and the test CA. conformance/run.sh runs the full matrix with the services
 * and drivers built.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { DriverRequest, WireProtocol } from "../protocol.js";
import { type DriverSpec, drivers } from "./drivers.js";
import { findKnownFailing, type KnownFailing, loadKnownFailing } from "./known-failing.js";
import { type Context, match, normalize, prepare, show } from "./match.js";
import { DriverProcess, type ServerHandle, startServer } from "./processes.js";
import { BreakableProxy, type NetAction } from "./proxy.js";
import { type CaseResult, caseName, isFailure, printTable, writeReport } from "./report.js";
import { loadScenarios, type Scenario } from "./scenario.js";
import { driverCredentials, makeSecurity } from "./secure.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const OP_TIMEOUT_MS = 30_000;
/** How long an `eventually` step keeps trying, and how often. */
const EVENTUALLY_MS = 10_000;
const EVENTUALLY_EVERY_MS = 20;

const { values: args } = parseArgs({
  options: {
    sdk: { type: "string", multiple: true },
    store: { type: "string", multiple: true },
    protocol: { type: "string", multiple: true },
    scenario: { type: "string", multiple: true },
    report: { type: "string" },
    "scenarios-dir": { type: "string" },
    "known-failing-dir": { type: "string" },
    secure: { type: "boolean", default: false },
    verbose: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(
    "usage: tsx conformance/runner/main.ts [--sdk ts,python,java] [--store memory|redis://…|mysql://…]… [--protocol p,…] [--scenario glob]… [--report path.xml|path.json] [--scenarios-dir dir] [--known-failing-dir dir] [--secure] [--verbose]",
  );
  process.exit(0);
}
const list = (v: string[] | undefined) => v?.flatMap((s) => s.split(",")).filter(Boolean);
const globs = list(args.scenario)?.map(
  (g) =>
    new RegExp(
      `^${g
        .split("*")
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
    ),
);
const log = (s: string) => process.stdout.write(`${s}\n`);

const scenarios = loadScenarios(args["scenarios-dir"] ?? join(root, "conformance/scenarios")).filter(
  (s) => !globs || globs.some((g) => g.test(s.name)),
);
const sdks = list(args.sdk) ?? drivers.map((d) => d.sdk);
const chosen = sdks.map((name) => {
  const d = drivers.find((x) => x.sdk === name);
  if (!d) throw new Error(`unknown --sdk ${name} (known: ${drivers.map((x) => x.sdk).join(", ")})`);
  return d;
});
const protocols = list(args.protocol) as WireProtocol[] | undefined;
const stores = args.store?.length ? args.store : ["memory"];
const storeKind = (url: string) => (url === "memory" ? "memory" : url.split(":")[0]!.replace(/^rediss$/, "redis"));
const logDir = join(root, ".run/conformance");
// One set of certificates, token and cluster secret for the whole run.
const security = args.secure ? makeSecurity(root, join(logDir, "tls")) : undefined;

const results: CaseResult[] = [];
const started = Date.now();
const running = new Map<string, DriverProcess>();

async function driverFor(spec: DriverSpec): Promise<{ proc: DriverProcess; fresh: boolean }> {
  const existing = running.get(spec.sdk);
  if (existing?.alive) return { proc: existing, fresh: false };
  const proc = new DriverProcess(spec.sdk, spec.command(root), root, {});
  running.set(spec.sdk, proc);
  return { proc, fresh: true };
}

/** Runs one scenario's steps; returns undefined on success or the failure text. */
async function runScenario(
  server: ServerHandle,
  proxy: BreakableProxy,
  proc: DriverProcess,
  s: Scenario,
): Promise<string | undefined> {
  // Workers of the last scenario go first (they could take this one's jobs), then its queues.
  await proxy.reset();
  const reset = await proc.request({ op: "reset" }, OP_TIMEOUT_MS);
  if (!reset.ok) return `reset: ${show(reset.error)}`;
  await server.reset();
  const ctx: Context = { vars: new Map([["worker_url", proxy.url]]), now: await server.now() };
  const clock = async (nowMs: number) => {
    const r = await proc.request({ op: "clock", now_ms: nowMs }, OP_TIMEOUT_MS);
    if (!r.ok) throw new Error(`clock: ${show(r.error)}`);
  };
  await clock(ctx.now);
  for (const step of s.steps) {
    const where = `step ${step.index + 1} (${step.op}${step.actor ? ` by ${step.actor}` : ""}${step.note ? `: ${step.note}` : ""})`;
    if (step.op === "advance_clock") {
      const ms = step.params.ms as number;
      // Workers' clocks move first: a job the advance makes due may be handled (and
      // snoozed, with a due time from that clock) before AdvanceClock returns.
      await clock(ctx.now + ms);
      ctx.now = await server.advance(ms);
      continue;
    }
    if (step.op === "net") {
      try {
        await proxy.apply(step.params.action as NetAction, step.params.when_held === true, EVENTUALLY_MS);
      } catch (err) {
        return `${where}: ${(err as Error).message}`;
      }
      continue;
    }
    let req: DriverRequest;
    try {
      req = { op: step.op, actor: step.actor!, ...(prepare(step.params, ctx) as object) } as DriverRequest;
    } catch (err) {
      return `${where}: ${(err as Error).message}`;
    }
    const expect = (step.expect ?? {}) as Record<string, unknown>;
    const wantsError = typeof expect === "object" && expect !== null && "error" in expect;
    const giveUpAt = Date.now() + EVENTUALLY_MS;
    for (let tries = 1; ; tries++) {
      const res = normalize(await proc.request(req, OP_TIMEOUT_MS)) as Record<string, unknown>;
      let failure: string | undefined;
      if (wantsError && res.ok === true)
        failure = `${where}: expected an error ${show(expect.error)}, but the call succeeded: ${show(res)}`;
      else if (!wantsError && res.ok !== true) failure = `${where}: expected success, got error ${show(res.error)}`;
      else {
        const errors = match(expect, res, ctx);
        if (errors.length > 0) failure = `${where}:\n      ${errors.join("\n      ")}`;
      }
      if (failure === undefined) break;
      // `eventually`: the state a worker's outcomes lead to arrives when they do (after
      // the ack delay, a stream message, a retry after a broken connection): ask again.
      if (!step.eventually || Date.now() >= giveUpAt)
        return step.eventually ? `${failure}\n      (still so after ${tries} tries in ${EVENTUALLY_MS} ms)` : failure;
      await new Promise((resolve) => setTimeout(resolve, EVENTUALLY_EVERY_MS));
    }
  }
  return undefined;
}

async function main(): Promise<number> {
  log(
    `conformance: ${scenarios.length} scenarios × sdk ${chosen.map((d) => d.sdk).join(",")} × store ${stores.map(storeKind).join(",")}${security ? " (auth and TLS on)" : ""}`,
  );
  const known = new Map<string, KnownFailing[]>(
    chosen.map((d) => [
      d.sdk,
      loadKnownFailing(args["known-failing-dir"] ?? join(root, "conformance/known-failing"), d.sdk),
    ]),
  );
  for (const store of stores) {
    const kind = storeKind(store);
    let server: ServerHandle;
    try {
      server = await startServer(root, store, logDir, security);
    } catch (err) {
      log(`store ${kind}: ${(err as Error).message}`);
      for (const d of chosen)
        for (const p of d.protocols)
          for (const s of scenarios)
            results.push({
              sdk: d.sdk,
              store: kind,
              protocol: p,
              scenario: s.name,
              status: "fail",
              ms: 0,
              message: `server did not start: ${(err as Error).message}`,
            });
      continue;
    }
    const proxy = new BreakableProxy(server.url);
    await proxy.start();
    try {
      for (const spec of chosen) {
        for (const protocol of spec.protocols.filter((p) => !protocols || protocols.includes(p))) {
          const t0 = Date.now();
          for (const s of scenarios) {
            const caseStart = Date.now();
            let failure: string | undefined;
            try {
              const { proc, fresh } = await driverFor(spec);
              // (Re)connect the driver to this server and protocol: a fresh driver, or a new group.
              if (fresh || s === scenarios[0]) {
                const r = await proc.request(
                  { op: "connect", url: server.url, protocol, worker_url: proxy.url, ...driverCredentials(security) },
                  fresh ? spec.startupTimeoutMs : OP_TIMEOUT_MS,
                );
                if (!r.ok) throw new Error(`connect failed: ${show(r.error)}`);
              }
              failure = await runScenario(server, proxy, proc, s);
            } catch (err) {
              failure = `runner: ${(err as Error).message}`;
              // A crashed, stuck or confused driver is restarted for the next case.
              await running.get(spec.sdk)?.stop();
              running.delete(spec.sdk);
            }
            const base = { sdk: spec.sdk, store: kind, protocol, scenario: s.name, ms: Date.now() - caseStart };
            const k = findKnownFailing(known.get(spec.sdk) ?? [], caseName(base));
            const r: CaseResult = failure
              ? k
                ? { ...base, status: "known-failing", message: `${k.reason}\n${failure}` }
                : { ...base, status: "fail", message: failure }
              : k
                ? {
                    ...base,
                    status: "unexpected-pass",
                    message: `listed in known-failing/${spec.sdk}.txt (${k.pattern}) but passed: remove it from the list`,
                  }
                : { ...base, status: "pass" };
            results.push(r);
            if (args.verbose || isFailure(r.status))
              log(
                `${r.status.toUpperCase().padEnd(15)} ${spec.sdk}/${caseName(r)}${r.message ? `\n    ${r.message.replace(/\n/g, "\n    ")}` : ""}`,
              );
          }
          // The group's last scenario may leave workers running: stop them, or they would take
          // the jobs of the next SDK's scenarios on this server (same queue names).
          await running
            .get(spec.sdk)
            ?.request({ op: "reset" }, OP_TIMEOUT_MS)
            .catch(() => {});
          const group = results.filter((r) => r.sdk === spec.sdk && r.store === kind && r.protocol === protocol);
          log(
            `${spec.sdk}/${kind}/${protocol}: ${group.filter((r) => !isFailure(r.status)).length}/${group.length} in ${Date.now() - t0} ms`,
          );
        }
      }
    } finally {
      await proxy.stop();
      await server.stop();
    }
  }
  await Promise.all([...running.values()].map((p) => p.stop()));

  printTable(
    results,
    scenarios.map((s) => s.name),
    log,
  );
  const failed = results.filter((r) => isFailure(r.status)).length;
  const knownFailing = results.filter((r) => r.status === "known-failing");
  log("");
  const byScenario = new Map<string, CaseResult[]>();
  for (const r of knownFailing) byScenario.set(r.scenario, [...(byScenario.get(r.scenario) ?? []), r]);
  for (const [scenario, rs] of byScenario) {
    log(
      `known failing: ${scenario} in ${rs.length} cases (${[...new Set(rs.map((r) => r.sdk))].join(", ")}): ${rs[0]!.message?.split("\n")[0]}`,
    );
  }
  if (args.report) {
    writeReport(args.report, results, Date.now() - started, security ? "conformance-secure" : "conformance");
    log(`report: ${args.report}`);
  }
  log(`${((Date.now() - started) / 1000).toFixed(1)} s; ${knownFailing.length} known failing (counted as passed)`);
  log(`${results.length - failed} passed, ${failed} failed`);
  return failed > 0 || results.length === 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    log("0 passed, 1 failed");
    process.exit(1);
  },
);
