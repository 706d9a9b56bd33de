/** The workflow state machine alone (docs/workflows.md): pure functions, no store. */
import { describe, expect, it } from "vitest";
import type { RunlaterError } from "../../src/domain/errors.js";
import { limits } from "../../src/domain/limits.js";
import { encodeInstance } from "../../src/domain/workflow-codec.js";
import { type InputSource, validateWorkflow, type WorkflowDef } from "../../src/domain/workflow-definition.js";
import {
  cancelInstance,
  closeInstance,
  disableJob,
  enableJob,
  instanceBytes,
  postExternal,
  rerun,
  runEnded,
  startInstance,
  type Transition,
  type WorkflowInstance,
  WorkflowRuleError,
} from "../../src/domain/workflow-transitions.js";

/** `value` and everything in it frozen: a write to any part throws (modules run in strict mode). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value) && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const NOW = 1_000;
const out = (customStatus = "", result = "") => ({ customStatus, result: new TextEncoder().encode(result) });

/** A definition from "job <- inputs" pairs; inputs "x" name jobs, "@x" external inputs. */
function wf(spec: Record<string, string[]>, onFailure: Record<string, "abort" | "continue"> = {}): WorkflowDef {
  const jobs = Object.entries(spec).map(([name, inputs]) => ({
    name,
    queue: `q_${name}`,
    inputs: inputs.map((i): InputSource => (i.startsWith("@") ? { external: i.slice(1) } : { job: i })),
    onFailure: onFailure[name] ?? "abort",
    body: new TextEncoder().encode(name),
    priority: 0,
    attemptsAllowed: 0,
  }));
  const def = { name: "wf", version: 1, jobs };
  validateWorkflow(def);
  return def;
}

let ids = 0;
const assign = (queue: string) => `${queue}.0.id${++ids}`;
const queued = (t: Transition) => t.enqueue.map((p) => `${p.job}#${p.run}`);
const states = (t: Transition) =>
  Object.fromEntries(Object.entries(t.instance.jobs).map(([name, job]) => [name, job.state]));

/** Ends run `run` of `job` and returns the next transition. */
function done(
  def: WorkflowDef,
  t: Transition,
  job: string,
  run = 1,
  outcome: "succeeded" | "failed" = "succeeded",
  postEvents = true,
) {
  return runEnded(
    def,
    t.instance,
    { job, run, outcome, output: out(`${job} ok`, `r-${job}`), postEvents, now: NOW },
    assign,
  );
}

describe("workflow instances", () => {
  it("runs a linear chain one job after another, passing each output downstream, and ends SUCCEEDED", () => {
    const def = wf({ a: [], b: ["a"], c: ["b"] });
    let t = startInstance(def, { id: "i1", now: NOW, keepOpen: false, external: [] }, assign);
    expect(queued(t)).toEqual(["a#1"]);
    expect(states(t)).toEqual({ a: "queued", b: "idle", c: "idle" });
    t = done(def, t, "a");
    expect(queued(t)).toEqual(["b#1"]);
    const trigger = t.instance.jobs.b!.runs[0]!.triggeredBy;
    expect(trigger).toEqual([
      { input: "job:a", event: expect.objectContaining({ from: { job: "a", run: 1 }, customStatus: "a ok" }) },
    ]);
    expect(new TextDecoder().decode(trigger[0]!.event.result)).toBe("r-a");
    t = done(def, t, "b");
    t = done(def, t, "c");
    expect(t.enqueue).toEqual([]);
    expect(t.instance.state).toBe("succeeded");
    expect(t.instance.endedAt).toBe(NOW);
  });

  it("fans out and waits for every input before a fan-in job runs (a diamond)", () => {
    const def = wf({ a: [], b: ["a"], c: ["a"], d: ["b", "c"] });
    let t = startInstance(def, { id: "i2", now: NOW, keepOpen: false, external: [] }, assign);
    t = done(def, t, "a");
    expect(queued(t)).toEqual(["b#1", "c#1"]);
    t = done(def, t, "b");
    expect(queued(t)).toEqual([]); // d still waits on c
    expect(states(t).d).toBe("idle");
    t = done(def, t, "c");
    expect(queued(t)).toEqual(["d#1"]);
    expect(t.instance.jobs.d!.runs[0]!.triggeredBy.map((x) => x.input)).toEqual(["job:b", "job:c"]);
    t = done(def, t, "d");
    expect(t.instance.state).toBe("succeeded");
  });

  it("aborts on a failed job whose policy is abort, cancelling the queued runs of the others", () => {
    const def = wf({ a: [], b: ["a"], c: ["a"], d: ["b", "c"] });
    let t = startInstance(def, { id: "i3", now: NOW, keepOpen: false, external: [] }, assign);
    t = done(def, t, "a");
    const cJob = t.enqueue.find((p) => p.job === "c")!.id;
    t = done(def, t, "b", 1, "failed");
    expect(t.instance.state).toBe("aborted");
    expect(t.cancel).toEqual([cJob]);
    expect(t.instance.jobs.c!.runs[0]!.outcome).toBe("abandoned");
    // c's worker acks later: nothing changes, nothing is posted.
    expect(done(def, t, "c").changed).toBe(false);
  });

  it("goes on without a failed job whose policy is continue, and ends FAILED", () => {
    const def = wf({ a: [], b: ["a"], c: ["a"], d: ["b"] }, { b: "continue" });
    let t = startInstance(def, { id: "i4", now: NOW, keepOpen: false, external: [] }, assign);
    t = done(def, t, "a");
    t = done(def, t, "b", 1, "failed");
    expect(t.instance.state).toBe("running");
    expect(queued(t)).toEqual([]); // d gets no event from a failed b
    t = done(def, t, "c");
    expect(t.instance.state).toBe("failed");
    expect(t.instance.failedRuns).toBe(1);
  });

  it("takes a run's outcome once: a repeated or unknown outcome changes nothing", () => {
    const def = wf({ a: [], b: ["a"] });
    let t = startInstance(def, { id: "i5", now: NOW, keepOpen: false, external: [] }, assign);
    t = done(def, t, "a");
    expect(done(def, t, "a").changed).toBe(false);
    expect(done(def, t, "b", 7).changed).toBe(false);
  });

  it("waits for an external input, and an instance kept open ends only when closed", () => {
    const def = wf({ load: ["@files"] });
    let t = startInstance(def, { id: "i6", now: NOW, keepOpen: true, external: [] }, assign);
    expect(t.instance.state).toBe("running");
    expect(queued(t)).toEqual([]);
    t = postExternal(def, t.instance, { input: "files", output: out("", "f1"), now: NOW }, assign);
    expect(queued(t)).toEqual(["load#1"]);
    t = done(def, t, "load");
    expect(t.instance.state).toBe("running"); // kept open
    t = postExternal(def, t.instance, { input: "files", output: out("", "f2"), now: NOW }, assign);
    t = done(def, t, "load", 2);
    t = closeInstance(def, t.instance, { now: NOW });
    expect(t.instance.state).toBe("succeeded");
    expect(() => postExternal(def, t.instance, { input: "nope", output: out(), now: NOW }, assign)).toThrow(
      WorkflowRuleError,
    );
  });

  it("runs a cycle from its seeded input until a run posts no events, which ends it", () => {
    const def = wf({ tick: [], tock: ["tick"] });
    def.jobs[0]!.inputs = [{ job: "tock", seed: true }];
    validateWorkflow(def);
    let t = startInstance(def, { id: "i7", now: NOW, keepOpen: false, external: [] }, assign);
    expect(queued(t)).toEqual(["tick#1"]);
    for (let round = 1; round <= 3; round++) {
      t = done(def, t, "tick", round);
      expect(queued(t)).toEqual([`tock#${round}`]);
      t = done(def, t, "tock", round);
      expect(queued(t)).toEqual([`tick#${round + 1}`]);
    }
    t = done(def, t, "tick", 4, "succeeded", false); // the handler says: no more
    expect(queued(t)).toEqual([]);
    expect(t.instance.state).toBe("succeeded");
    expect(t.instance.jobs.tick!.runCount).toBe(4);
  });

  it("re-runs a run with the events that triggered it", () => {
    const def = wf({ a: [], b: ["a"] });
    let t = startInstance(def, { id: "i8", now: NOW, keepOpen: true, external: [] }, assign);
    t = done(def, t, "a");
    t = done(def, t, "b");
    const first = t.instance.jobs.b!.runs[0]!.triggeredBy[0]!.event;
    t = rerun(def, t.instance, { job: "b", run: 1, now: NOW }, assign);
    expect(queued(t)).toEqual(["b#2"]);
    expect(t.instance.jobs.b!.runs[1]!.triggeredBy[0]!.event).toEqual(first);
    // A job without inputs re-runs as one more run.
    t = done(def, t, "b", 2);
    t = rerun(def, t.instance, { job: "a", run: 1, now: NOW }, assign);
    expect(queued(t)).toEqual(["a#2"]);
    expect(() => rerun(def, t.instance, { job: "b", run: 99, now: NOW }, assign)).toThrow(WorkflowRuleError);
  });

  it("never runs a disabled job, gathers its events, and runs it once enabled", () => {
    const def = wf({ a: [], b: ["a"], c: [] });
    let t = startInstance(def, { id: "i9", now: NOW, keepOpen: false, external: [] }, assign);
    const cJob = t.enqueue.find((p) => p.job === "c")!.id;
    t = disableJob(def, t.instance, { job: "b", now: NOW });
    t = disableJob(def, t.instance, { job: "c", now: NOW });
    expect(t.cancel).toEqual([cJob]); // c's pending run is cancelled
    t = done(def, t, "a");
    expect(queued(t)).toEqual([]);
    expect(t.instance.jobs.b!.inputs["job:a"]!.length).toBe(1);
    expect(t.instance.state).toBe("succeeded"); // nothing can run: quiescent
    const open = startInstance(def, { id: "i10", now: NOW, keepOpen: true, external: [] }, assign);
    let u = disableJob(def, open.instance, { job: "b", now: NOW });
    u = done(def, u, "a");
    u = enableJob(def, u.instance, { job: "b", now: NOW }, assign);
    expect(queued(u)).toEqual(["b#1"]);
  });

  it("cancels: queued runs are abandoned and their pending queue jobs cancelled", () => {
    const def = wf({ a: [], b: [] });
    const t = startInstance(def, { id: "i11", now: NOW, keepOpen: false, external: [] }, assign);
    const c = cancelInstance(t.instance, { now: NOW });
    expect(c.instance.state).toBe("cancelled");
    expect(c.cancel.sort()).toEqual(t.enqueue.map((p) => p.id).sort());
    expect(cancelInstance(c.instance, { now: NOW }).changed).toBe(false);
  });

  it("keeps at most the allowed number of unconsumed events per input, dropping the oldest", () => {
    const def = wf({ a: ["@in", "@other"] });
    let t = startInstance(def, { id: "i12", now: NOW, keepOpen: true, external: [] }, assign);
    for (let i = 0; i < limits.workflowEventsPerInputMax + 3; i++) {
      t = postExternal(def, t.instance, { input: "in", output: out(`e${i}`), now: NOW }, assign);
    }
    const job = t.instance.jobs.a!;
    expect(job.inputs["external:in"]!.length).toBe(limits.workflowEventsPerInputMax);
    expect(job.inputs["external:in"]![0]!.customStatus).toBe("e3");
    expect(job.droppedEvents).toBe(3);
  });

  it("never changes the instance it is given, and moves the revision on every change", () => {
    const def = wf({ a: [], b: ["a"] });
    const t = startInstance(def, { id: "i13", now: NOW, keepOpen: false, external: [] }, assign);
    const before = structuredClone(t.instance);
    const next = done(def, t, "a");
    expect(t.instance).toEqual(before);
    expect(next.instance.rev).toBeGreaterThan(t.instance.rev);
  });

  it("writes to no part of the instance it is given (every transition, on a frozen instance)", () => {
    const def = wf({ a: [], b: ["a"], c: ["a"], d: ["b", "c", "@in"] }, { b: "continue" });
    const frozen = (t: Transition) => deepFreeze(t.instance);
    const started = startInstance(def, { id: "i14", now: NOW, keepOpen: true, external: [] }, assign);
    const afterA = runEnded(
      def,
      frozen(started),
      { job: "a", run: 1, outcome: "succeeded", output: out(), postEvents: true, now: NOW },
      assign,
    );
    const steps = [
      (i: WorkflowInstance) =>
        runEnded(def, i, { job: "b", run: 1, outcome: "failed", output: out(), postEvents: true, now: NOW }, assign),
      (i: WorkflowInstance) => postExternal(def, i, { input: "in", output: out("x"), now: NOW }, assign),
      (i: WorkflowInstance) => rerun(def, i, { job: "a", run: 1, now: NOW }, assign),
      (i: WorkflowInstance) => disableJob(def, i, { job: "c", now: NOW }),
      (i: WorkflowInstance) => enableJob(def, i, { job: "c", now: NOW }, assign),
      (i: WorkflowInstance) => closeInstance(def, i, { now: NOW }),
      (i: WorkflowInstance) => cancelInstance(i, { now: NOW }),
    ];
    let t = afterA;
    for (const step of steps) {
      const before = structuredClone(t.instance);
      const next = step(frozen(t));
      expect(t.instance).toEqual(before);
      t = next;
    }
    expect(t.instance.state).toBe("cancelled");
  });
});

describe("an instance's size bound", () => {
  /** A ring of `n` jobs, each fed by the two before it (seeded), run `rounds` times with `result`-byte outputs. */
  function ring(n: number, rounds: number, resultBytes: number, ownResultBytes = resultBytes) {
    const spec = Object.fromEntries(
      Array.from({ length: n }, (_, i) => [`j${i}`, [`j${(i + n - 1) % n}`, `j${(i + n - 2) % n}`]]),
    );
    const base = wf(spec);
    const def = {
      ...base,
      jobs: base.jobs.map((j) => ({ ...j, inputs: j.inputs.map((i) => ({ ...i, seed: true })) })),
    };
    // Times as a real clock gives them (13 digits), as an instance stores them.
    let now = Date.UTC(2026, 10, 27);
    let t = startInstance(def, { id: "i_big", now, keepOpen: true, external: [] }, assign);
    for (let r = 0; r < rounds; r++) {
      for (const [job, state] of Object.entries(t.instance.jobs)) {
        for (const run of state.runs.filter((x) => x.outcome === "queued")) {
          const output = {
            customStatus: "ok",
            result: new Uint8Array(run.triggeredBy.length ? ownResultBytes : resultBytes).fill(r),
          };
          t = runEnded(
            def,
            t.instance,
            { job, run: run.run, outcome: "succeeded", output, postEvents: true, now: ++now },
            assign,
          );
        }
      }
    }
    return { def, t };
  }

  it("trims the history of a continuous workflow to the bound: the oldest runs' triggering results first, never a queued run's", () => {
    const { def, t } = ring(10, 25, limits.workflowResultBytesMax);
    const encoded = encodeInstance(t.instance).length;
    expect(encoded).toBeLessThanOrEqual(limits.workflowInstanceBytesMax);
    expect(encoded).toBeGreaterThan(limits.workflowInstanceBytesMax / 2); // it did grow to the bound
    const runs = Object.values(t.instance.jobs).flatMap((j) => j.runs);
    const trimmed = runs.filter((r) => r.trimmed);
    expect(trimmed.length).toBeGreaterThan(0);
    for (const r of trimmed) for (const e of r.triggeredBy) expect(e.event.result.length).toBe(0);
    // What still runs keeps everything its queue job was given.
    const queued = runs.filter((r) => r.outcome === "queued");
    expect(queued.length).toBeGreaterThan(0);
    for (const r of queued)
      for (const e of r.triggeredBy) expect(e.event.result.length).toBe(limits.workflowResultBytesMax);
    // The newest ended runs are whole; each trimmed run ended before every whole one of its job.
    for (const j of Object.values(t.instance.jobs)) {
      const ended = j.runs.filter((r) => r.outcome !== "queued");
      const lastTrimmed = Math.max(0, ...ended.filter((r) => r.trimmed).map((r) => r.run));
      expect(ended.filter((r) => !r.trimmed).every((r) => r.run > lastTrimmed)).toBe(true);
    }
    // A trimmed run cannot be re-run (its events lost their results); a whole one can.
    const [job, state] = Object.entries(t.instance.jobs).find(([, j]) => j.runs.some((r) => r.trimmed))!;
    const old = state.runs.find((r) => r.trimmed)!;
    expect(() => rerun(def, t.instance, { job, run: old.run, now: NOW }, assign)).toThrow(
      /trimmed to the instance's size bound/,
    );
    const [wholeJob, wholeState] = Object.entries(t.instance.jobs).find(([, j]) =>
      j.runs.some((r) => r.outcome !== "queued" && !r.trimmed),
    )!;
    const whole = wholeState.runs.find((r) => r.outcome !== "queued" && !r.trimmed)!;
    expect(rerun(def, t.instance, { job: wholeJob, run: whole.run, now: NOW }, assign).changed).toBe(true);
  });

  it("drops the oldest ended runs when trimming results is not enough", () => {
    // Small triggering events, large own results: only dropping runs brings it down.
    const { t } = ring(20, 25, 0, limits.workflowResultBytesMax);
    expect(encodeInstance(t.instance).length).toBeLessThanOrEqual(limits.workflowInstanceBytesMax);
    const kept = Object.values(t.instance.jobs).map((j) => j.runs.length);
    expect(Math.min(...kept)).toBeLessThan(limits.workflowRunsKept);
    expect(Math.min(...kept)).toBeGreaterThan(0);
  });

  it("estimates an instance's stored size from above, within a quarter", () => {
    for (const [n, rounds, bytes] of [
      [3, 2, 0],
      [5, 10, 100],
      [10, 25, limits.workflowResultBytesMax],
    ] as const) {
      const { t } = ring(n, rounds, bytes);
      const actual = encodeInstance(t.instance).length;
      expect(instanceBytes(t.instance)).toBeGreaterThanOrEqual(actual);
      expect(instanceBytes(t.instance)).toBeLessThanOrEqual(actual * 1.25);
    }
  });
});

describe("workflow definitions", () => {
  it("refuses duplicate jobs, unknown upstream jobs, repeated inputs and bad names, naming the field", () => {
    const refusal = (spec: Record<string, string[]>) => {
      try {
        wf(spec);
      } catch (err) {
        return { field: (err as RunlaterError).field, message: (err as Error).message };
      }
      throw new Error("accepted");
    };
    expect(refusal({ a: [], b: ["nope"] })).toEqual({
      field: "workflow.jobs[1].inputs[0]",
      message: expect.stringMatching(/"nope"/),
    });
    expect(refusal({ a: ["@x", "@x"] })).toEqual({
      field: "workflow.jobs[0].inputs[1]",
      message: expect.stringMatching(/twice/),
    });
    expect(refusal({ "bad name": [] }).field).toBe("workflow.jobs[0].name");
    expect(() => validateWorkflow({ name: "w", jobs: [] })).toThrow(/at least one job/);
  });
});
