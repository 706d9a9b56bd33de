/**
 * Group commit of workflow steps and new instances (engine/workflows.ts): on a store that
 * takes several in one call (Redis), the steps and starts that arrive while one call is in
 * flight go as the next call, and each caller gets its own answer.
 */
import { describe, expect, it } from "vitest";
import { settle } from "../../src/domain/clock.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import type { InstanceInsert, InstanceStep, WorkflowStore } from "../../src/store/store.js";
import { setup } from "./harness.js";

/** A memory store given the many-calls, one by one underneath, recorded and held until released. */
function groupingStore() {
  const store = new MemoryStore();
  const ws = store.workflows as WorkflowStore;
  const calls: Array<{ kind: "apply" | "insert"; size: number }> = [];
  const held: Array<() => void> = [];
  const hold = () => new Promise<void>((release) => held.push(release));
  ws.instanceApplyMany = async (steps: InstanceStep[]) => {
    calls.push({ kind: "apply", size: steps.length });
    await hold();
    const answers = [];
    for (const step of steps) answers.push(await ws.instanceApply(step).catch((err: Error) => err));
    return answers;
  };
  ws.instanceInsertMany = async (inserts: InstanceInsert[]) => {
    calls.push({ kind: "insert", size: inserts.length });
    await hold();
    return Promise.all(inserts.map((i) => ws.instanceInsert(i)));
  };
  /** Lets every held call go on until none is held. */
  const drain = async () => {
    for (let i = 0; i < 100; i++) {
      await settle();
      const next = held.shift();
      if (!next) return;
      next();
    }
  };
  return { store, calls, drain };
}

describe("workflow steps and starts on a store that takes several at once", () => {
  it("go in one call per write in flight, each answered on its own", async () => {
    const g = groupingStore();
    const h = await setup({ store: g.store });
    const job = (name: string, inputs: Array<{ job: string }> = []) => ({
      name,
      queue: h.queue,
      inputs,
      onFailure: "abort" as const,
      body: new Uint8Array(),
      priority: 0,
      attemptsAllowed: 0,
    });
    await h.engine.workflows.apply({ name: "wf_grouped", jobs: [job("a"), job("b", [{ job: "a" }])] });
    const starts = Array.from({ length: 10 }, () =>
      h.engine.workflows.start({ workflow: "wf_grouped", events: [], keepOpen: false }),
    );
    await g.drain();
    const instances = await Promise.all(starts);
    expect(g.calls).toEqual([
      { kind: "insert", size: 1 },
      { kind: "insert", size: 9 },
    ]);
    expect(new Set(instances.map((i) => i.id)).size).toBe(10);

    // Every a, acknowledged in one ACK call: ten steps, in two store calls.
    g.calls.length = 0;
    const runs = await h.dequeue(10);
    expect(runs).toHaveLength(10);
    const first = h.ok(runs[0]!);
    await settle();
    const rest = h.engine.ack({
      queue: h.queue,
      succeeded: runs.slice(1).map((r) => ({ jobId: r.id, claimToken: r.claimToken, customStatus: "" })),
      failed: [],
    });
    const acked = Promise.all([first, rest]).then((answers) => answers.flat());
    await g.drain();
    expect((await acked).map((r) => r.outcome)).toEqual(Array(10).fill("acknowledged"));
    expect(g.calls.map((c) => c.kind)).toEqual(["apply", "apply"]);
    expect(g.calls.map((c) => c.size)).toEqual([1, 9]);
    for (const i of instances) {
      const now = await h.engine.workflows.instance(i.id);
      expect(now.jobs.a!.runs[0]!.outcome).toBe("succeeded");
      expect(now.jobs.b!.state).toBe("queued");
    }
  });
});
