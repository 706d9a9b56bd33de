/**
 * runlater.testing.v1.TestControlService: served only with enableTestControl (then on a
 * manual clock starting at the real time), refused with a clear message otherwise.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createRunlaterClient, defineWorkflow } from "@runlater/sdk";
import { ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { InstanceState } from "@runlater/sdk/gen/workflow_service_pb.js";
import { startServer } from "@runlater/server/src/server.js";
import { MemoryStore } from "@runlater/server/src/store/memory/memory-store.js";
import { describe, expect, it } from "vitest";
import { TestControlService } from "../../server/src/gen/runlater/testing/v1/control_pb.js";

async function setup(enableTestControl: boolean) {
  const server = await startServer({ store: new MemoryStore(), port: 0, enableTestControl });
  const control = createClient(TestControlService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
  return { server, control, client: createRunlaterClient(server.url) };
}

describe("TestControlService", () => {
  it("is refused with unimplemented and a hint without --enable-test-control", async () => {
    const { server, control } = await setup(false);
    try {
      const err = await control.now({}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Unimplemented);
      expect((err as ConnectError).rawMessage).toContain("--enable-test-control");
      await expect(control.reset({})).rejects.toThrow(/disabled/);
    } finally {
      await server.stop();
    }
  });

  it("moves a manual clock that starts at the real time, expiring claims on the way", async () => {
    const { server, control, client } = await setup(true);
    try {
      const start = timestampDate((await control.now({})).now!).getTime();
      expect(Math.abs(start - Date.now())).toBeLessThan(5_000);
      await client.createQueue("q", { claimTimeoutMs: 1_000, retryPolicy: { initialDelayMs: 100 } });
      const [id] = await client.enqueueMany([{ queue: "q", body: "x", attemptsAllowed: 3 }]);
      expect((await client.worker.dequeue({ queue: "q" })).jobs).toHaveLength(1);
      const moved = timestampDate((await control.advanceClock({ duration: { seconds: 5n, nanos: 0 } })).now!).getTime();
      expect(moved).toBe(start + 5_000);
      const { jobs } = await client.jobs.getJobs({ jobIds: [id!] });
      // Expired at start + 1 s exactly, due again 100 ms later.
      expect(timestampDate(jobs[0]!.runAfter!).getTime()).toBe(start + 1_100);
      expect(jobs[0]!.attemptsRemaining).toBe(2);
      expect((await control.reset({})).deletedQueues).toBe(1);
      expect((await client.queues.listQueues({})).queues).toEqual([]);
      await expect(control.advanceClock({ duration: { seconds: -1n, nanos: 0 } })).rejects.toThrow(/negative/);
    } finally {
      await server.stop();
    }
  });

  it("fires a due schedule within AdvanceClock, and Reset deletes schedules too", async () => {
    const { server, control, client } = await setup(true);
    const schedules = createClient(
      ScheduleService,
      createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }),
    );
    try {
      await client.createQueue("ticks");
      await schedules.createSchedule({
        schedule: { name: "tick", cron: "*/10 * * * * *", target: { case: "job", value: { queue: "ticks" } } },
      });
      await control.advanceClock({ duration: { seconds: 10n, nanos: 0 } });
      expect((await schedules.getSchedule({ name: "tick" })).schedule!.fires).toBe(1n);
      await control.reset({});
      expect((await schedules.listSchedules({})).schedules).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("Reset cancels the running workflow instances before it deletes their queues", async () => {
    const { server, control, client } = await setup(true);
    try {
      await client.createQueue("step");
      await client.applyWorkflow(defineWorkflow("w").job("a", { queue: "step", inputs: [{ external: "go" }] }));
      const started = [];
      for (let i = 0; i < 3; i++)
        started.push((await client.workflows.startInstance({ workflow: "w", keepOpen: true })).instance!);
      expect((await control.reset({})).deletedQueues).toBe(1);
      for (const instance of started) {
        const after = (await client.workflows.getInstance({ instanceId: instance.instanceId })).instance!;
        expect(after.state).toBe(InstanceState.CANCELLED);
      }
    } finally {
      await server.stop();
    }
  });
});
