/**
 * Workflows through the SDK against the in-process server: the builder, the instance
 * helpers, and a Worker whose handlers hand their outputs (result payload, no events)
 * to the downstream runs.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import type { RunlaterClient } from "../src/client.js";
import { success } from "../src/control.js";
import { FailurePolicy, InstanceState, RunOutcome } from "../src/gen/runlater/v1/workflow_service_pb.js";
import type { WorkerJob } from "../src/worker/worker-job.js";
import { Worker } from "../src/worker.js";
import { defineWorkflow } from "../src/workflows.js";
import { uniqueQueue, withTestServer } from "./helpers.js";

let client: RunlaterClient;
withTestServer((_, c) => {
  client = c;
});

const workers: Worker[] = [];
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

async function work(queue: string, handler: (job: WorkerJob) => Promise<unknown>): Promise<void> {
  const worker = new Worker({ client, queue, handler: handler as never, pollWaitMs: 100, ackDelayMs: 0 });
  workers.push(worker);
  await worker.start();
}

describe("defineWorkflow", () => {
  it("builds inputs, failure policies and bodies into the message", () => {
    const w = defineWorkflow("etl")
      .job("extract", { queue: "q", inputs: [{ external: "files" }, { job: "load", seed: true }] })
      .job("load", { queue: "q", inputs: ["extract"], onFailure: "continue", body: { table: "t" } })
      .build();
    expect(w.jobs.map((j) => j.name)).toEqual(["extract", "load"]);
    expect(w.jobs[0]!.inputs.map((i) => [i.source.case, i.source.value, i.seed])).toEqual([
      ["external", "files", false],
      ["job", "load", true],
    ]);
    expect(w.jobs[1]!.onFailure).toBe(FailurePolicy.CONTINUE);
    expect(w.jobs[0]!.onFailure).toBe(FailurePolicy.ABORT);
    expect(new TextDecoder().decode(w.jobs[1]!.body)).toBe('{"table":"t"}');
  });

  it("refuses an input from a job that is not defined, a repeated job and a bad name", () => {
    expect(() =>
      defineWorkflow("w")
        .job("a", { queue: "q", inputs: ["nope"] })
        .build(),
    ).toThrow("job a takes input from nope, which is not defined");
    expect(() => defineWorkflow("w").job("a", { queue: "q" }).job("a", { queue: "q" })).toThrow("defined twice");
    expect(() => defineWorkflow("bad name")).toThrow("workflow name");
    expect(() => defineWorkflow("w").build()).toThrow("at least one job");
  });
});

describe("workflows end to end", () => {
  it("passes a run's result payload and custom status to the downstream run's triggering events", async () => {
    const queue = uniqueQueue("wf");
    await client.createQueue(queue);
    const name = uniqueQueue("chain");
    await client.applyWorkflow(
      defineWorkflow(name)
        .job("a", { queue, inputs: [{ external: "go" }], body: "a" })
        .job("b", { queue, inputs: ["a"], body: "b" }),
    );
    const seen: WorkerJob[] = [];
    await work(queue, async (job) => {
      seen.push(job);
      return job.text() === "a" ? success({ customStatus: "a done", result: "from-a" }) : "b done";
    });
    const started = await client.startInstance(name, { events: { go: { customStatus: "ext", result: "in" } } });
    const ended = await client.waitForInstance(started.instanceId, { timeoutMs: 10_000, pollIntervalMs: 20 });
    expect(ended.state).toBe(InstanceState.SUCCEEDED);
    const b = seen.find((j) => j.text() === "b")!;
    expect(b.workflow?.job).toBe("b");
    expect(b.workflow?.instanceId).toBe(started.instanceId);
    expect(b.workflow?.triggeredBy.map((e) => [e.fromJob, e.customStatus, new TextDecoder().decode(e.result)])).toEqual(
      [["a", "a done", "from-a"]],
    );
    const a = seen.find((j) => j.text() === "a")!;
    expect(a.workflow?.triggeredBy.map((e) => [e.input, e.customStatus])).toEqual([["external:go", "ext"]]);
  });

  it("posts no events after a run that returns noEvents: the cycle stops", async () => {
    const queue = uniqueQueue("wf");
    await client.createQueue(queue);
    const name = uniqueQueue("loop");
    await client.applyWorkflow(defineWorkflow(name).job("tick", { queue, inputs: [{ job: "tick", seed: true }] }));
    await work(queue, async (job) => ({ customStatus: `run ${job.workflow?.run}`, noEvents: job.workflow?.run === 3 }));
    const { instanceId } = await client.startInstance(name);
    const ended = await client.waitForInstance(instanceId, { timeoutMs: 10_000, pollIntervalMs: 20 });
    expect(ended.state).toBe(InstanceState.SUCCEEDED);
    expect(ended.jobs[0]!.runCount).toBe(3);
    expect(ended.jobs[0]!.runs.map((r) => r.outcome)).toEqual([
      RunOutcome.SUCCEEDED,
      RunOutcome.SUCCEEDED,
      RunOutcome.SUCCEEDED,
    ]);
  });

  it("fails the attempt, naming the bound, when a handler returns a result over 4 KiB", async () => {
    const queue = uniqueQueue("wf");
    await client.createQueue(queue);
    const name = uniqueQueue("big");
    await client.applyWorkflow(defineWorkflow(name).job("a", { queue, attemptsAllowed: 1 }));
    await work(queue, async () => ({ result: new Uint8Array(4097) }));
    const { instanceId } = await client.startInstance(name);
    const ended = await client.waitForInstance(instanceId, { timeoutMs: 10_000, pollIntervalMs: 20 });
    expect(ended.state).toBe(InstanceState.ABORTED);
    expect(ended.jobs[0]!.runs[0]!.customStatus).toContain("result is 4097 bytes; at most 4096");
  });

  it("refuses an external event over 4 KiB before sending it", async () => {
    await expect(client.postEvent("any", "go", { result: new Uint8Array(4097) })).rejects.toThrow(
      "result is 4097 bytes; at most 4096",
    );
  });

  it("waitForInstance gives up with DEADLINE_EXCEEDED while the instance runs", async () => {
    const queue = uniqueQueue("wf");
    await client.createQueue(queue);
    const name = uniqueQueue("idle");
    await client.applyWorkflow(defineWorkflow(name).job("a", { queue }));
    const { instanceId } = await client.startInstance(name); // no worker: it stays RUNNING
    const err = await client.waitForInstance(instanceId, { timeoutMs: 50, pollIntervalMs: 10 }).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.DeadlineExceeded);
    expect((err as ConnectError).rawMessage).toBe(`instance ${instanceId} still RUNNING after 50 ms`);
  });
});
