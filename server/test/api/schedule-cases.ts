/**
 * ScheduleService through the public API under a manual clock (docs/workflows.md#schedules),
 * on any store that keeps schedules: each store's entry test (schedules*.test.ts) runs these
 * cases with describeScheduleService. A fire runs on the maintenance leader's timer; on a
 * store over the network its writes land after advance() returns, so the cases wait for
 * what a fire records (vi.waitFor polls; the clock does not move meanwhile).
 */
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { CatchUp, FireOutcome, OverlapPolicy, ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { InstanceState, WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { type RunningServer, startServer } from "../../src/server.js";
import type { Store } from "../../src/store/store.js";
import { timestampToMs } from "../../src/wire/time.js";
import { refusal } from "./refusal.js";

const HOUR = 3_600_000;

export function clients(url: string) {
  const transport = createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
  return {
    schedules: createClient(ScheduleService, transport),
    workflows: createClient(WorkflowService, transport),
    queues: createClient(QueueService, transport),
  };
}

/** The ScheduleService cases on a server over `openStore`'s store (the server closes it when it stops). */
export function describeScheduleService(name: string, openStore: () => Promise<Store>): void {
  describe(`ScheduleService on the ${name} store`, () => {
    let server: RunningServer;
    let clock: ManualClock;
    let c: ReturnType<typeof clients>;

    beforeAll(async () => {
      clock = new ManualClock(Date.UTC(2030, 0, 1, 7, 59, 50)); // 10 s before 09:00 in Berlin
      server = await startServer({ store: await openStore(), port: 0, clock });
      c = clients(server.url);
      await c.queues.createQueue({ name: "reports" });
      await c.workflows.applyWorkflow({
        workflow: { name: "report", jobs: [{ name: "build", queue: "reports", body: new TextEncoder().encode("r") }] },
      });
    });
    afterAll(() => server.stop());

    /**
     * Waits until `check` passes. On a store over the network the maintenance leader's
     * rounds land after advance() returns, and the look it then sets for "now" runs on the
     * next advance: advance(0) runs it without moving the clock.
     */
    const settled = <T>(check: () => Promise<T>): Promise<T> =>
      vi.waitFor(
        async () => {
          await clock.advance(0);
          return check();
        },
        { timeout: 5000, interval: 20 },
      );

    it("creates, shows next fire times, fires under the clock, pauses, resumes, updates and deletes", async () => {
      const created = await c.schedules.createSchedule({
        schedule: {
          name: "daily_report",
          cron: "0 9 * * *",
          timeZone: "Europe/Berlin",
          target: { case: "workflow", value: { workflow: "report" } },
          overlap: OverlapPolicy.ALLOW,
        },
      });
      expect(created.created).toBe(true);
      const s = created.schedule!;
      expect(s).toMatchObject({
        name: "daily_report",
        timeZone: "Europe/Berlin",
        catchUp: CatchUp.NONE,
        paused: false,
      });
      expect(timestampToMs(s.nextFireAt)).toBe(Date.UTC(2030, 0, 1, 8)); // 09:00 in Berlin

      const got = await c.schedules.getSchedule({ name: "daily_report", upcoming: 3 });
      expect(got.schedule!.upcoming.map(timestampToMs)).toEqual([
        Date.UTC(2030, 0, 1, 8),
        Date.UTC(2030, 0, 2, 8),
        Date.UTC(2030, 0, 3, 8),
      ]);
      expect((await c.schedules.getSchedule({ name: "daily_report" })).schedule!.upcoming).toHaveLength(5);
      expect((await c.schedules.getSchedule({ name: "daily_report", upcoming: 100 })).schedule!.upcoming).toHaveLength(
        100,
      );

      await clock.advance(10_000);
      const fired = await settled(async () => {
        const s = (await c.schedules.getSchedule({ name: "daily_report" })).schedule!;
        expect(s.fires).toBe(1n);
        return s;
      });
      expect(fired.lastStarted).toBe("daily_report@20300101T080000Z");
      expect(fired.history[0]).toMatchObject({ outcome: FireOutcome.STARTED, started: fired.lastStarted });
      const { instance } = await c.workflows.getInstance({ instanceId: fired.lastStarted });
      expect(instance!.state).toBe(InstanceState.RUNNING);

      const paused = await c.schedules.pauseSchedule({ name: "daily_report" });
      expect(paused.schedule!.paused).toBe(true);
      expect(paused.schedule!.nextFireAt).toBeUndefined();
      await clock.advance(HOUR / 2);
      expect((await c.schedules.getSchedule({ name: "daily_report" })).schedule!.fires).toBe(1n);
      const resumed = await c.schedules.resumeSchedule({ name: "daily_report" });
      expect(timestampToMs(resumed.schedule!.nextFireAt)).toBe(Date.UTC(2030, 0, 2, 8));

      const updated = await c.schedules.updateSchedule({
        schedule: {
          name: "daily_report",
          cron: "*/30 * * * *",
          target: { case: "job", value: { queue: "reports", body: new TextEncoder().encode("plain") } },
          catchUp: CatchUp.LATEST,
        },
      });
      expect(updated.schedule).toMatchObject({ timeZone: "UTC", catchUp: CatchUp.LATEST, overlap: OverlapPolicy.SKIP });
      expect(updated.schedule!.catchUpWindow?.seconds).toBe(3600n);
      expect(updated.schedule!.target.case).toBe("job");

      expect((await c.schedules.deleteSchedule({ name: "daily_report" })).deleted).toBe(true);
      expect((await c.schedules.deleteSchedule({ name: "daily_report" })).deleted).toBe(false);
      expect((await refusal(c.schedules.getSchedule({ name: "daily_report" }))).code).toBe(Code.NotFound);
    });

    it("refuses what a schedule may not be, naming the field", async () => {
      const bad = (over: object) =>
        refusal(
          c.schedules.createSchedule({
            schedule: {
              name: "bad",
              cron: "0 * * * *",
              target: { case: "workflow", value: { workflow: "report" } },
              ...over,
            },
          }),
        );
      expect(await bad({ cron: "61 * * * *" })).toMatchObject({ code: Code.InvalidArgument, field: "schedule.cron" });
      expect(await bad({ timeZone: "Nowhere/City" })).toMatchObject({ field: "schedule.time_zone" });
      expect(await bad({ target: { case: undefined } })).toMatchObject({ field: "schedule.target" });
      expect(await bad({ catchUp: CatchUp.LATEST, catchUpWindow: { seconds: 30n, nanos: 0 } })).toMatchObject({
        field: "schedule.catch_up_window",
      });
      expect(await refusal(c.schedules.getSchedule({ name: "x", upcoming: 101 }))).toMatchObject({ field: "upcoming" });
    });

    it("lists by name a page at a time", async () => {
      for (const name of ["list_a", "list_b", "list_c"]) {
        await c.schedules.createSchedule({
          schedule: { name, cron: "0 0 * * *", target: { case: "workflow", value: { workflow: "report" } } },
          paused: true,
        });
      }
      const first = await c.schedules.listSchedules({ limit: 2 });
      expect(first.schedules.map((s) => s.name)).toEqual(["list_a", "list_b"]);
      const rest = await c.schedules.listSchedules({ limit: 2, pageToken: first.nextPageToken });
      expect(rest.schedules.map((s) => s.name)).toEqual(["list_c"]);
      expect(rest.nextPageToken).toBe("");
      expect((await refusal(c.schedules.listSchedules({ pageToken: "??" }))).field).toBe("page_token");
    });
  });
}
