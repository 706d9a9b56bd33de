/**
 * Tests of the conformance runner itself (conformance/runner): the matcher, the scenario
 * validator, the known-failing list, and one end-to-end run over fixture scenarios that
 * must pass, fail, fail as listed, and pass although listed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findKnownFailing, loadKnownFailing } from "../../conformance/runner/known-failing.js";
import { type Context, match, normalize, prepare } from "../../conformance/runner/match.js";
import { BreakableProxy } from "../../conformance/runner/proxy.js";
import { validateScenario } from "../../conformance/runner/scenario.js";

const root = join(import.meta.dirname, "../..");
const ctx = (now = 1_000): Context => ({ vars: new Map(), now });

describe("match", () => {
  it("binds a $var on first use and compares it afterwards", () => {
    const c = ctx();
    expect(match({ job_ids: ["$a", "$b"] }, { job_ids: ["x", "y"] }, c)).toEqual([]);
    expect(c.vars.get("a")).toBe("x");
    expect(match({ id: "$a" }, { id: "x" }, c)).toEqual([]);
    expect(match({ id: "$a" }, { id: "y" }, c)[0]).toContain('expected $a = "x"');
  });

  it("binds nothing when the match fails", () => {
    const c = ctx();
    expect(match({ a: "$a", b: 2 }, { a: 1, b: 3 }, c)).toHaveLength(1);
    expect(c.vars.has("a")).toBe(false);
  });

  it("is a subset match on mappings and an exact-length match on lists", () => {
    expect(match({ a: 1 }, { a: 1, extra: true }, ctx())).toEqual([]);
    expect(match({ l: [1] }, { l: [1, 2] }, ctx())[0]).toContain("expected 1 items, got 2");
  });

  it("has matchers for absence, length, time, order and containment", () => {
    expect(match({ t: { $now_plus_ms: 500 } }, { t: 1_500 }, ctx())).toEqual([]);
    expect(match({ t: { $now_plus_ms: 500 } }, { t: 1_501 }, ctx())).toHaveLength(1);
    expect(match({ x: { $absent: true } }, {}, ctx())).toEqual([]);
    expect(match({ x: { $absent: true } }, { x: 0 }, ctx())).toHaveLength(1);
    expect(match({ l: { $len: 2 } }, { l: [1, 2] }, ctx())).toEqual([]);
    expect(match({ s: { $contains: "b" } }, { s: "abc" }, ctx())).toEqual([]);
    expect(match({ n: { $gte: 3 } }, { n: 2 }, ctx())).toHaveLength(1);
    const c = ctx();
    expect(
      match({ l: { $unordered: [{ k: 2, v: "$two" }, { k: 1 }] } }, { l: [{ k: 1 }, { k: 2, v: "b" }] }, c),
    ).toEqual([]);
    expect(c.vars.get("two")).toBe("b");
    c.vars.set("x", 5);
    expect(match({ n: { $ne: "$x" } }, { n: 5 }, c)).toHaveLength(1);
    expect(match({ n: { $ne: "$x" } }, { n: 6 }, c)).toEqual([]);
    // A list of strings: each must be in the text; $vars in it are resolved.
    c.vars.set("url", "http://127.0.0.1:9");
    expect(match({ m: { $contains: ["queue", "$url"] } }, { m: "queue q at http://127.0.0.1:9: down" }, c)).toEqual([]);
    expect(match({ m: { $contains: ["queue", "$url"] } }, { m: "queue q at elsewhere" }, c)[0]).toContain(
      '["http://127.0.0.1:9"]',
    );
  });

  it("prepares requests: $vars, bodies and relative times", () => {
    const c = ctx(10_000);
    c.vars.set("id", "job-1");
    expect(prepare({ job_ids: ["$id"], jobs: [{ queue: "q", body: "hi", run_after_in_ms: 5 }] }, c)).toEqual({
      job_ids: ["job-1"],
      jobs: [{ queue: "q", body_b64: "aGk=", run_after_ms: 10_005 }],
    });
    expect(prepare({ jobs: { $repeat: 3, job: { queue: "q", body_hex: "00ff" } } }, c)).toEqual({
      jobs: Array(3).fill({ queue: "q", body_b64: "AP8=" }),
    });
    expect(() => prepare({ id: "$unbound" }, c)).toThrow(/not bound/);
    // A scripted handler's action travels as the job's body, in JSON.
    expect(prepare({ jobs: [{ queue: "q", body_json: { wait: "go", do: { return: "ok" } } }] }, c)).toEqual({
      jobs: [{ queue: "q", body_b64: Buffer.from('{"wait":"go","do":{"return":"ok"}}').toString("base64") }],
    });
  });

  it("normalizes results: derived body fields, nulls dropped", () => {
    expect(normalize({ body_b64: "aGk=", claim_expires_at_ms: null })).toMatchObject({ body: "hi", body_len: 2 });
    expect(normalize({ body_b64: "AP8=" })).not.toHaveProperty("body");
  });
});

describe("validateScenario", () => {
  const valid = {
    name: "x",
    description: "d",
    steps: [
      { actor: "a", op: "create_queue", queue: "q" },
      { op: "advance_clock", ms: 5 },
    ],
  };

  it("accepts a valid scenario", () => {
    expect(validateScenario(valid, "dir/x.yaml").errors).toEqual([]);
  });

  it("names the step and field of every mistake", () => {
    const { errors } = validateScenario(
      {
        name: "y",
        description: "d",
        steps: [
          { op: "create_queue", queue: "q" },
          { actor: "a", op: "enqueue", jobs: [{ queue: "q", body: "x", prio: 1 }] },
          { actor: "a", op: "frobnicate" },
          { op: "advance_clock", actor: "a", ms: 1 },
        ],
      },
      "dir/x.yaml",
    );
    expect(errors.join("\n")).toMatch(/name must be the file name/);
    expect(errors.join("\n")).toMatch(/steps\[0\] \(create_queue\): missing actor/);
    expect(errors.join("\n")).toMatch(/steps\[1\] \(enqueue\)\.jobs\[0\]: unknown field prio/);
    expect(errors.join("\n")).toMatch(/steps\[2\]: unknown op "frobnicate"/);
    expect(errors.join("\n")).toMatch(/steps\[3\] \(advance_clock\): control steps have no actor/);
  });

  it("checks the worker layer's steps: handler actions, eventually on reads only, net actions", () => {
    const { errors } = validateScenario(
      {
        name: "x",
        description: "d",
        steps: [
          {
            actor: "p",
            op: "enqueue",
            jobs: [{ queue: "q", body_json: { attempts: [{ raise: "x" }, { explode: 1 }] } }],
          },
          { actor: "w", op: "worker_start", queue: "q", options: { concurrency: 2, grace: 1 } },
          { actor: "w", op: "worker_stop", eventually: true, expect: {} },
          { actor: "p", op: "count_jobs", queue: "q", eventually: true },
          { op: "net", action: "unplug" },
          { op: "net", action: "hold", when_held: true },
        ],
      },
      "dir/x.yaml",
    );
    const text = errors.join("\n");
    expect(text).toMatch(/body_json\.attempts\[1\]: expected a handler action/);
    expect(text).toMatch(/steps\[1\] \(worker_start\)\.options: unknown field grace/);
    expect(text).toMatch(/steps\[2\] \(worker_stop\): eventually repeats read-only steps only/);
    expect(text).toMatch(/steps\[3\] \(count_jobs\): eventually needs an expect/);
    expect(text).toMatch(/steps\[4\] \(net\)\.action: expected one of sever, hold, down, up/);
    expect(text).toMatch(/steps\[5\] \(net\): when_held goes with action sever/);
  });
});

describe("the workers' proxy", () => {
  /** An echo server, and a client through the proxy that collects what comes back. */
  async function setup() {
    const echo = createServer((s) => s.pipe(s));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    const proxy = new BreakableProxy(`http://127.0.0.1:${(echo.address() as { port: number }).port}`);
    await proxy.start();
    const connect = async () => {
      const s = createConnection({ host: "127.0.0.1", port: Number(new URL(proxy.url).port) });
      await new Promise<void>((resolve, reject) => s.once("connect", resolve).once("error", reject));
      let got = "";
      s.on("data", (d: Buffer) => (got += d.toString()));
      const closed = new Promise<void>((resolve) => s.once("close", () => resolve()));
      return { s, got: () => got, closed };
    };
    const stop = async () => {
      await proxy.stop();
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    };
    return { proxy, connect, stop };
  }
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).toBe(true);
  };

  it("forwards, and severs every connection on request", async () => {
    const { proxy, connect, stop } = await setup();
    try {
      const c = await connect();
      c.s.write("ping");
      await until(() => c.got() === "ping");
      await proxy.apply("sever", false, 1000);
      await c.closed;
      const again = await connect(); // new connections go through again
      again.s.write("pong");
      await until(() => again.got() === "pong");
      again.s.destroy();
    } finally {
      await stop();
    }
  });

  it("holds what clients send, and severs once something was held", async () => {
    const { proxy, connect, stop } = await setup();
    try {
      const c = await connect();
      await proxy.apply("hold", false, 1000);
      const severed = proxy.apply("sever", true, 5000); // waits for held bytes
      c.s.write("lost");
      await severed;
      await c.closed;
      expect(c.got()).toBe(""); // never reached the server
      await expect(proxy.apply("sever", true, 50)).rejects.toThrow(/nothing was sent/);
    } finally {
      await stop();
    }
  });

  it("refuses connections while down, and takes them again once up", async () => {
    const { proxy, connect, stop } = await setup();
    try {
      await proxy.apply("down", false, 1000);
      await expect(connect()).rejects.toThrow(/ECONNREFUSED/);
      await proxy.apply("up", false, 1000);
      const c = await connect();
      c.s.write("back");
      await until(() => c.got() === "back");
      c.s.destroy();
    } finally {
      await stop();
    }
  });
});

describe("known-failing lists", () => {
  it("match <store>/<protocol>/<scenario> globs and need a reason", () => {
    const list = loadKnownFailing(join(import.meta.dirname, "fixtures/known-failing"), "ts");
    expect(findKnownFailing(list, "redis/grpc/meta-xfail")?.reason).toBe("listed on purpose");
    expect(findKnownFailing(list, "redis/grpc/meta-xpass")).toBeUndefined();
    expect(loadKnownFailing(join(import.meta.dirname, "fixtures/known-failing"), "nope")).toEqual([]);
  });
});

describe("the runner end to end", () => {
  it("reports pass, fail, known-failing and unexpected-pass, and exits non-zero", () => {
    const report = join(mkdtempSync(join(tmpdir(), "conformance-")), "report.json");
    const run = spawnSync(
      process.execPath,
      [
        join(root, "node_modules/tsx/dist/cli.mjs"),
        join(root, "conformance/runner/main.ts"),
        "--sdk",
        "ts",
        "--protocol",
        "connect-binary",
        "--scenarios-dir",
        join(import.meta.dirname, "fixtures/scenarios"),
        "--known-failing-dir",
        join(import.meta.dirname, "fixtures/known-failing"),
        "--report",
        report,
      ],
      { cwd: root, encoding: "utf8", timeout: 60_000 },
    );
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/2 passed, 2 failed\n$/);
    const r = JSON.parse(readFileSync(report, "utf8")) as {
      results: Array<{ scenario: string; status: string; message?: string }>;
    };
    const status = Object.fromEntries(r.results.map((x) => [x.scenario, x.status]));
    expect(status).toEqual({
      "meta-fail": "fail",
      "meta-pass": "pass",
      "meta-xfail": "known-failing",
      "meta-xpass": "unexpected-pass",
    });
    expect(r.results.find((x) => x.scenario === "meta-fail")?.message).toContain(
      "result.jobs[0].priority: expected 1, got 2",
    );
  }, 60_000);
});
