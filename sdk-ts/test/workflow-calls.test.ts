/**
 * The client's instance and schedule helpers against the in-process server: lists that
 * filter and follow page tokens, cancel/close/rerun/disable/enable, and a schedule's
 * whole life.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { RunlaterClient } from "../src/client.js";
import { OverlapPolicy } from "../src/gen/runlater/v1/schedule_service_pb.js";
import { type Instance, InstanceJobState, InstanceState } from "../src/gen/runlater/v1/workflow_service_pb.js";
import { Worker } from "../src/worker.js";
import { defineWorkflow } from "../src/workflows.js";
import { eventually, uniqueQueue, withTestServer } from "./helpers.js";

let client: RunlaterClient;
withTestServer((_, c) => {
  client = c;
});

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** A workflow of one job "a" fed by the external input "go", on a fresh queue. */
async function oneJobWorkflow(): Promise<{ name: string; queue: string }> {
  const queue = uniqueQueue("wfc");
  await client.createQueue(queue);
  const name = uniqueQueue("flow");
  await client.applyWorkflow(defineWorkflow(name).job("a", { queue, inputs: [{ external: "go" }] }));
  return { name, queue };
}

describe("listInstances", () => {
  it("filters by workflow and state and follows page tokens one instance at a time", async () => {
    const a = await oneJobWorkflow();
    const b = await oneJobWorkflow();
    const started: Instance[] = [];
    for (let i = 0; i < 3; i++) started.push(await client.startInstance(a.name, { keepOpen: true }));
    await client.startInstance(b.name, { keepOpen: true });
    await client.cancelInstance(started[0]!.instanceId);
    const pages: string[] = [];
    const spy = client.workflows.listInstances;
    client.workflows.listInstances = (req, opts) => {
      pages.push(req.pageToken ?? "");
      return spy(req, opts);
    };
    try {
      const ofA = await collect(client.listInstances({ workflow: a.name, pageSize: 1 }));
      expect(ofA.map((i) => i.instanceId).sort()).toEqual(started.map((i) => i.instanceId).sort());
      expect(pages.length).toBeGreaterThanOrEqual(3);
    } finally {
      client.workflows.listInstances = spy;
    }
    const running = await collect(
      client.listInstances({ workflow: a.name, state: InstanceState.RUNNING, pageSize: 1 }),
    );
    expect(running.map((i) => i.instanceId).sort()).toEqual([started[1]!.instanceId, started[2]!.instanceId].sort());
    const cancelled = await collect(client.listInstances({ workflow: a.name, state: InstanceState.CANCELLED }));
    expect(cancelled.map((i) => i.instanceId)).toEqual([started[0]!.instanceId]);
  });

  it("refuses a page size outside 1..1000 before calling, naming the bound", () => {
    expect(() => client.listInstances({ pageSize: 0 })).toThrow("pageSize 0: an integer from 1 to 1000");
    expect(() => client.listInstances({ pageSize: 1001 })).toThrow("pageSize 1001: an integer from 1 to 1000");
    expect(() => client.listSchedules({ pageSize: 2.5 })).toThrow("pageSize 2.5: an integer from 1 to 1000");
  });
});

describe("instance steering", () => {
  it("reruns, disables and enables a job, closes a keep-open instance and cancels another", async () => {
    const { name, queue } = await oneJobWorkflow();
    const worker = new Worker({ client, queue, handler: async () => "ok", pollWaitMs: 100, ackDelayMs: 0 });
    await worker.start();
    try {
      const { instanceId } = await client.startInstance(name, { keepOpen: true, events: { go: {} } });
      const runs = (n: number) =>
        eventually(async () => {
          const job = (await client.getInstance(instanceId)).jobs[0]!;
          expect(job.runs.filter((r) => r.endedAt).length).toBe(n);
          return job;
        });
      await runs(1);
      expect((await client.rerunJob(instanceId, "a", 1)).state).toBe(InstanceState.RUNNING);
      await runs(2);

      const disabled = await client.disableJob(instanceId, "a");
      expect(disabled.jobs[0]!.state).toBe(InstanceJobState.DISABLED);
      const fed = await client.postEvent(instanceId, "go");
      expect(fed.jobs[0]!.pendingEvents).toHaveLength(1); // it gathers; nothing runs
      expect((await client.enableJob(instanceId, "a")).jobs[0]!.state).not.toBe(InstanceJobState.DISABLED);
      await runs(3);

      const closed = await client.closeInstance(instanceId);
      expect(closed.state).toBe(InstanceState.SUCCEEDED);
    } finally {
      await worker.stop();
    }
    const other = await client.startInstance(name, { keepOpen: true });
    expect((await client.cancelInstance(other.instanceId)).state).toBe(InstanceState.CANCELLED);
    expect((await client.getInstance(other.instanceId)).state).toBe(InstanceState.CANCELLED);
  });
});

describe("schedules", () => {
  it("creates, lists across pages, updates, pauses, resumes and deletes a schedule", async () => {
    const queue = uniqueQueue("sched");
    await client.createQueue(queue);
    const names = [uniqueQueue("s"), uniqueQueue("s")];
    for (const name of names) {
      const { schedule, created } = await client.createSchedule({ name, cron: "0 3 * * *", queue, body: "tick" });
      expect(created).toBe(true);
      expect(schedule.nextFireAt).toBeDefined();
    }
    const again = await client.createSchedule({ name: names[0]!, cron: "@hourly", queue });
    expect(again.created).toBe(false);
    expect(again.schedule.cron).toBe("0 3 * * *");

    const listed = await collect(client.listSchedules({ pageSize: 1 }));
    expect(listed.map((s) => s.name)).toEqual(expect.arrayContaining(names));

    const updated = await client.updateSchedule({
      name: names[0]!,
      cron: "30 4 * * *",
      timeZone: "Europe/Berlin",
      queue,
      overlap: OverlapPolicy.ALLOW,
    });
    expect([updated.cron, updated.timeZone, updated.overlap]).toEqual([
      "30 4 * * *",
      "Europe/Berlin",
      OverlapPolicy.ALLOW,
    ]);

    const paused = await client.pauseSchedule(names[0]!);
    expect(paused.paused).toBe(true);
    expect(paused.nextFireAt).toBeUndefined();
    const resumed = await client.resumeSchedule(names[0]!);
    expect(resumed.paused).toBe(false);
    expect(resumed.nextFireAt).toBeDefined();
    expect((await client.getSchedule(names[0]!, { upcoming: 3 })).upcoming).toHaveLength(3);

    expect(await client.deleteSchedule(names[0]!)).toBe(true);
    expect(await client.deleteSchedule(names[0]!)).toBe(false);
    const gone = await client.getSchedule(names[0]!).catch((e) => e);
    expect(gone).toBeInstanceOf(ConnectError);
    expect((gone as ConnectError).code).toBe(Code.NotFound);
  });

  it("refuses a definition with both or neither of workflow and queue", async () => {
    await expect(client.createSchedule({ name: "x", cron: "@daily" })).rejects.toThrow(
      "schedule x: give exactly one of workflow (to start) or queue (to enqueue on)",
    );
    await expect(client.updateSchedule({ name: "x", cron: "@daily", workflow: "w", queue: "q" })).rejects.toThrow(
      "give exactly one of workflow",
    );
  });
});
