/**
 * The workflow pages' logic that needs no browser: the graph's layered layout (cycles
 * included) and how access.ts decides buttons from a token's scopes and queue patterns.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Workflow, type WorkflowJobSchema, WorkflowSchema } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterEach, describe, expect, it } from "vitest";
import { can, grants } from "../src/access.js";
import { externalId, layoutWorkflow } from "../src/graph.js";

const job = (name: string) => ({ source: { case: "job" as const, value: name } });
const external = (name: string) => ({ source: { case: "external" as const, value: name } });

function workflow(jobs: Array<MessageInitShape<typeof WorkflowJobSchema>>): Workflow {
  return create(WorkflowSchema, { name: "w", jobs: jobs.map((j) => ({ ...j, queue: "q" })) });
}

describe("layoutWorkflow", () => {
  it("puts each job one layer right of its furthest input, external inputs first", () => {
    const layout = layoutWorkflow(
      workflow([
        { name: "extract", inputs: [external("files")] },
        { name: "a", inputs: [job("extract")] },
        { name: "b", inputs: [job("extract")] },
        { name: "load", inputs: [job("a"), job("b"), job("extract")] },
      ]),
    );
    const x = new Map(layout.nodes.map((n) => [n.id, n.x]));
    expect(x.get(externalId("files"))).toBe(0);
    expect(x.get("extract")!).toBeGreaterThan(0);
    expect(x.get("a")).toBe(x.get("b"));
    expect(x.get("a")!).toBeGreaterThan(x.get("extract")!);
    expect(x.get("load")!).toBeGreaterThan(x.get("a")!);
    const ys = layout.nodes.filter((n) => n.id === "a" || n.id === "b").map((n) => n.y);
    expect(new Set(ys).size).toBe(2); // side by side in one layer, not on top of each other
    expect(layout.edges.filter((e) => e.back)).toEqual([]);
  });

  it("lays out a cycle by drawing the edge that closes it back, and a job that feeds itself", () => {
    const layout = layoutWorkflow(
      workflow([
        { name: "extract", inputs: [external("go"), job("load")] },
        { name: "load", inputs: [job("extract")] },
        { name: "tick", inputs: [{ ...job("tick"), seed: true }] },
      ]),
    );
    const back = layout.edges.filter((e) => e.back).map((e) => `${e.from}>${e.to}`);
    expect(back.sort()).toEqual(["load>extract", "tick>tick"]);
    const x = new Map(layout.nodes.map((n) => [n.id, n.x]));
    expect(x.get("load")!).toBeGreaterThan(x.get("extract")!);
    expect(layout.edges.find((e) => e.from === "tick")!.seed).toBe(true);
    expect(layout.height).toBeGreaterThan(Math.max(...layout.nodes.map((n) => n.y))); // room for the loops
  });
});

describe("can", () => {
  afterEach(() => {
    grants.current = undefined;
  });

  it("allows everything while the server has no auth", () => {
    expect(can("jobs.delete", "any_queue")).toBe(true);
    expect(can("workflow.cancel")).toBe(true);
  });

  it("allows only what the token's scopes cover", () => {
    grants.current = { scopes: new Set(["read"]), queues: [] };
    for (const action of ["queue.update", "job.enqueue", "workflow.rerun", "schedule.pause"] as const)
      expect(can(action, "emails")).toBe(false);
    grants.current = { scopes: new Set(["read", "enqueue"]), queues: [] };
    expect(can("job.enqueue", "emails")).toBe(true);
    expect(can("workflow.post-event")).toBe(true);
    expect(can("workflow.cancel")).toBe(false);
  });

  it("limits a token with queue patterns to its queues, and to nothing that spans queues", () => {
    grants.current = { scopes: new Set(["admin", "enqueue"]), queues: ["emails*", "sms"] };
    expect(can("queue.update", "emails_eu")).toBe(true);
    expect(can("queue.update", "sms")).toBe(true);
    expect(can("queue.update", "sms_eu")).toBe(false);
    expect(can("queue.create")).toBe(true); // the name is not typed yet: the server checks it
    expect(can("workflow.toggle-job")).toBe(false);
    expect(can("schedule.pause")).toBe(false);
  });
});
