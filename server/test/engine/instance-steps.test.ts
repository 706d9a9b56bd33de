/**
 * Steps on one workflow instance taken in turn, with the instance as this process last
 * wrote it (engine/instance-steps.ts): two nodes on one store still apply every outcome,
 * since the store refuses a step decided on a stale copy and the step reads again.
 */
import { describe, expect, it } from "vitest";
import { settle } from "../../src/domain/clock.js";
import type { WorkflowInstance } from "../../src/domain/workflow-transitions.js";
import { InstanceSteps } from "../../src/engine/instance-steps.js";
import { RUNS_HANDED_OUT_CHARS_MAX, RUNS_HANDED_OUT_MAX } from "../../src/engine/workflows.js";
import { setup } from "./harness.js";

const instance = (id: string, state: WorkflowInstance["state"] = "running", jobs: WorkflowInstance["jobs"] = {}) =>
  ({ id, workflow: "w", state, rev: 1, jobs }) as WorkflowInstance;

describe("InstanceSteps", () => {
  it("runs the steps of one instance one after another, those of others side by side", async () => {
    const steps = new InstanceSteps();
    const order: string[] = [];
    let release!: () => void;
    const first = steps.inTurn("i1", async () => {
      order.push("i1 first starts");
      await new Promise<void>((r) => (release = r));
      order.push("i1 first ends");
    });
    const second = steps.inTurn("i1", async () => void order.push("i1 second"));
    const other = steps.inTurn("i2", async () => void order.push("i2"));
    await other;
    await settle();
    expect(order).toEqual(["i1 first starts", "i2"]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["i1 first starts", "i2", "i1 first ends", "i1 second"]);
  });

  it("runs the next step after one that failed, and passes the failure to its caller", async () => {
    const steps = new InstanceSteps();
    const failed = steps.inTurn("i1", async () => {
      throw new Error("store down");
    });
    await expect(failed).rejects.toThrow("store down");
    await expect(steps.inTurn("i1", async () => "next")).resolves.toBe("next");
  });

  it("keeps at most its bound of instances, dropping the least recently used, and no ended ones", () => {
    const steps = new InstanceSteps(2);
    steps.wrote(instance("a"));
    steps.wrote(instance("b"));
    steps.cached("a"); // a used after b
    steps.wrote(instance("c"));
    expect([steps.cached("a")?.id, steps.cached("b"), steps.cached("c")?.id]).toEqual(["a", undefined, "c"]);
    steps.wrote(instance("a", "succeeded"));
    expect(steps.cached("a")).toBeUndefined();
    steps.forget("c");
    expect(steps.cached("c")).toBeUndefined();
  });

  it("keeps at most its bound of bytes of instances, however few they are", () => {
    const job = (resultBytes: number) => ({
      state: "idle" as const,
      inputs: { "external:in": [{ id: "e", postedAt: 1, customStatus: "", result: new Uint8Array(resultBytes) }] },
      runs: [],
      runCount: 0,
      droppedEvents: 0,
    });
    const big = (id: string) => instance(id, "running", { a: job(30_000) });
    const steps = new InstanceSteps(100, 100_000);
    for (const id of ["a", "b", "c"]) steps.wrote(big(id)); // about 40 KB each
    expect([steps.cached("a"), steps.cached("b")?.id, steps.cached("c")?.id]).toEqual([undefined, "b", "c"]);
    steps.wrote(instance("d")); // small: room for it
    expect([steps.cached("b")?.id, steps.cached("c")?.id, steps.cached("d")?.id]).toEqual(["b", "c", "d"]);
  });
});

describe("two nodes acknowledging runs of one instance", () => {
  it("applies an outcome decided on this node's stale copy again on the stored instance", async () => {
    const one = await setup();
    const two = await setup({ store: one.store });
    const job = (name: string, inputs: Array<{ job: string }> = []) => ({
      name,
      queue: one.queue,
      inputs,
      onFailure: "abort" as const,
      body: new Uint8Array(),
      priority: 0,
      attemptsAllowed: 0,
    });
    await one.engine.workflows.apply({
      name: "wf_two_nodes",
      jobs: [job("a"), job("b"), job("x", [{ job: "a" }, { job: "b" }])],
    });
    const started = await one.engine.workflows.start({ workflow: "wf_two_nodes", events: [], keepOpen: false });
    const runOf = (name: string) => started.jobs[name]!.runs[0]!.queueJobId;
    const [first, second] = await one.dequeue(2);
    const a = [first!, second!].find((j) => j.id === runOf("a"))!;
    const b = [first!, second!].find((j) => j.id === runOf("b"))!;
    const ack = (node: typeof one, j: { id: string; claimToken: string }) =>
      node.engine.ack({
        queue: one.queue,
        succeeded: [{ jobId: j.id, claimToken: j.claimToken, customStatus: "" }],
        failed: [],
      });

    expect((await ack(one, a))[0]!.outcome).toBe("acknowledged"); // node one keeps the instance as it wrote it
    expect((await ack(two, b))[0]!.outcome).toBe("acknowledged"); // node two moves it on: node one's copy is stale
    // x's job was announced to node two's broker; node one's owns the partition (in a cluster, Notify tells it).
    one.broker.notify(one.queue, 0, one.clock.now());
    const [x] = await one.dequeue(1, 1000);
    expect((await ack(one, x!))[0]!.outcome).toBe("acknowledged");

    const ended = await two.engine.workflows.instance(started.id);
    expect(ended.state).toBe("succeeded");
    expect(
      Object.fromEntries(Object.entries(ended.jobs).map(([name, j]) => [name, j.runs.map((r) => r.outcome)])),
    ).toEqual({
      a: ["succeeded"],
      b: ["succeeded"],
      x: ["succeeded"],
    });
  });
});

describe("the ACK of a run this node handed out (no plain ACK step first)", () => {
  it("posts nothing under a stale claim token, and everything under the right one", async () => {
    const h = await setup();
    const job = (name: string, inputs: Array<{ job: string }> = []) => ({
      name,
      queue: h.queue,
      inputs,
      onFailure: "abort" as const,
      body: new Uint8Array(),
      priority: 0,
      attemptsAllowed: 0,
    });
    await h.engine.workflows.apply({ name: "wf_fast_ack", jobs: [job("a"), job("b", [{ job: "a" }])] });
    const started = await h.engine.workflows.start({ workflow: "wf_fast_ack", events: [], keepOpen: false });
    const [a] = await h.dequeue(1);
    const stale = await h.ok({ id: a!.id, claimToken: "not-the-claim" });
    expect(stale[0]!.outcome).not.toBe("acknowledged");
    const after = await h.engine.workflows.instance(started.id);
    expect(after.rev).toBe(started.rev);
    expect(after.jobs.b!.runs).toEqual([]);

    expect((await h.ok(a!))[0]!.outcome).toBe("acknowledged");
    const moved = await h.engine.workflows.instance(started.id);
    expect(moved.jobs.a!.runs[0]!.outcome).toBe("succeeded");
    expect(moved.jobs.b!.runs.map((r) => r.outcome)).toEqual(["queued"]);
  });
});

describe("the runs a node keeps for their ACK", () => {
  it("keeps at most RUNS_HANDED_OUT_MAX, the oldest dropped; plain jobs and asked-for runs are not kept", async () => {
    const h = await setup();
    const runs = Array.from({ length: RUNS_HANDED_OUT_MAX + 1 }, (_, i) => ({ id: `run${i}`, workflow: `ctx${i}` }));
    h.engine.workflows.handedOut([{ id: "plain" }, ...runs]);
    expect(h.engine.workflows.runHandedOut("plain")).toBeUndefined();
    expect(h.engine.workflows.runHandedOut("run0")).toBeUndefined(); // dropped at the bound
    expect(h.engine.workflows.runHandedOut("run1")).toBe("ctx1");
    expect(h.engine.workflows.runHandedOut(`run${RUNS_HANDED_OUT_MAX}`)).toBe(`ctx${RUNS_HANDED_OUT_MAX}`);
    expect(h.engine.workflows.runHandedOut("run1")).toBeUndefined(); // its ACK came: forgotten
  });

  it("keeps at most RUNS_HANDED_OUT_CHARS_MAX of their contexts, however few runs that is", async () => {
    const h = await setup();
    const context = "x".repeat(1024 * 1024);
    const count = RUNS_HANDED_OUT_CHARS_MAX / context.length + 5;
    h.engine.workflows.handedOut(Array.from({ length: count }, (_, i) => ({ id: `big${i}`, workflow: context })));
    expect(h.engine.workflows.runHandedOut("big4")).toBeUndefined(); // the oldest went
    expect(h.engine.workflows.runHandedOut("big5")).toBe(context);
    expect(h.engine.workflows.runHandedOut(`big${count - 1}`)).toBe(context);
  });
});
