/** The reconciler's decision alone (docs/workflows.md#the-reconciler): pure functions, no store. */
import { describe, expect, it } from "vitest";
import { validateWorkflow, type WorkflowDef } from "../../src/domain/workflow-definition.js";
import { type QueueJobSeen, queuedRunJobs, queuedRunsEnded } from "../../src/domain/workflow-reconcile.js";
import { startInstance } from "../../src/domain/workflow-transitions.js";

const NOW = 1_000;
let ids = 0;
const assign = (queue: string) => `${queue}.0.id${++ids}`;

function def(onFailure: "abort" | "continue"): WorkflowDef {
  const job = (name: string, inputs: string[]) => ({
    name,
    queue: "q",
    inputs: inputs.map((j) => ({ job: j })),
    onFailure,
    body: new Uint8Array(),
    priority: 0,
    attemptsAllowed: 0,
  });
  const d = { name: "wf", version: 1, jobs: [job("a", []), job("b", []), job("c", ["a"])] };
  validateWorkflow(d);
  return d;
}

const start = (d: WorkflowDef) =>
  startInstance(d, { id: "i1", now: NOW, keepOpen: false, external: [] }, assign).instance;

describe("queuedRunsEnded", () => {
  it("ends a run whose queue job failed (with its custom status) and leaves live ones queued", () => {
    const d = def("continue");
    const instance = start(d);
    const [a, b] = queuedRunJobs(instance);
    const seen = new Map<string, QueueJobSeen>([
      [a!, { state: "failed", customStatus: "claim expired" }],
      [b!, { state: "live" }],
    ]);
    const t = queuedRunsEnded(d, instance, seen, NOW + 5, assign);
    expect(t.changed).toBe(true);
    expect(t.instance.jobs.a!.runs[0]).toMatchObject({
      outcome: "failed",
      customStatus: "claim expired",
      endedAt: NOW + 5,
    });
    expect(t.instance.jobs.b!.runs[0]!.outcome).toBe("queued");
    expect(t.instance.failedRuns).toBe(1);
    expect(t.enqueue).toEqual([]); // a failed run posts nothing: c waits
    expect(t.instance.state).toBe("running");
  });

  it("ends a run whose queue job is gone, under its failure policy (abort cancels the rest)", () => {
    const d = def("abort");
    const instance = start(d);
    const [a, b] = queuedRunJobs(instance);
    const t = queuedRunsEnded(d, instance, new Map([[a!, { state: "gone" } as const]]), NOW, assign);
    expect(t.instance.state).toBe("aborted");
    expect(t.instance.jobs.a!.runs[0]!.customStatus).toMatch(/is gone/);
    expect(t.cancel).toEqual([b]);
  });

  it("is idempotent: a run already ended is left alone, and an ended instance has nothing to read", () => {
    const d = def("continue");
    const instance = start(d);
    const [a] = queuedRunJobs(instance);
    const seen = new Map([[a!, { state: "failed", customStatus: "" } as const]]);
    const once = queuedRunsEnded(d, instance, seen, NOW, assign);
    const twice = queuedRunsEnded(d, once.instance, seen, NOW, assign);
    expect(twice.changed).toBe(false);
    expect(twice.instance).toBe(once.instance);
    const ended = { ...once.instance, state: "cancelled" as const };
    expect(queuedRunJobs(ended)).toEqual([]);
  });
});
