/**
 * ScheduleService through the public API, on the memory store under a manual clock
 * (docs/workflows.md#schedules), on the SQLite store under the real clock (the default
 * store: its calls go through its database's thread, which a manual clock's settling does
 * not wait for), and one fire per time across a failover of the maintenance leader between
 * two nodes sharing one store.
 */
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { CatchUp, FireOutcome, OverlapPolicy, ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { InstanceState, WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { timestampToMs } from "../../src/wire/time.js";
import { SqliteFiles } from "../store/sqlite-harness.js";
import { refusal } from "./refusal.js";

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;

function clients(url: string) {
  const transport = createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
  return {
    schedules: createClient(ScheduleService, transport),
    workflows: createClient(WorkflowService, transport),
    queues: createClient(QueueService, transport),
  };
}

describe("ScheduleService on the memory store", () => {
  let server: RunningServer;
  let clock: ManualClock;
  let c: ReturnType<typeof clients>;

  beforeAll(async () => {
    clock = new ManualClock(Date.UTC(2030, 0, 1, 7, 59, 50)); // 10 s before 09:00 in Berlin
    server = await startServer({ store: new MemoryStore(), port: 0, clock });
    c = clients(server.url);
    await c.queues.createQueue({ name: "reports" });
    await c.workflows.applyWorkflow({
      workflow: { name: "report", jobs: [{ name: "build", queue: "reports", body: new TextEncoder().encode("r") }] },
    });
  });
  afterAll(() => server.stop());

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
    expect(s).toMatchObject({ name: "daily_report", timeZone: "Europe/Berlin", catchUp: CatchUp.NONE, paused: false });
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
    const fired = (await c.schedules.getSchedule({ name: "daily_report" })).schedule!;
    expect(fired.fires).toBe(1n);
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

describe("ScheduleService on the SQLite store (real clock)", () => {
  const files = new SqliteFiles();
  let server: RunningServer;
  let c: ReturnType<typeof clients>;

  beforeAll(async () => {
    server = await startServer({ store: await files.open(), port: 0 });
    c = clients(server.url);
    await c.queues.createQueue({ name: "beats" });
    await c.workflows.applyWorkflow({
      workflow: { name: "beat", jobs: [{ name: "only", queue: "beats", body: new TextEncoder().encode("b") }] },
    });
  });
  afterAll(async () => {
    await server.stop();
    await files.dispose();
  });

  /** The schedule once `ok` holds for it (fires come each second). */
  async function once(name: string, ok: (fires: bigint) => boolean) {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      const s = (await c.schedules.getSchedule({ name })).schedule!;
      if (ok(s.fires)) return s;
    }
    throw new Error(`schedule ${name} did not fire in time`);
  }

  it("fires each second into instances and jobs, and pauses, updates, lists and deletes", async () => {
    const every = "* * * * * *";
    await c.schedules.createSchedule({
      schedule: {
        name: "beat_wf",
        cron: every,
        target: { case: "workflow", value: { workflow: "beat" } },
        overlap: OverlapPolicy.ALLOW,
      },
    });
    await c.schedules.createSchedule({
      schedule: {
        name: "beat_job",
        cron: every,
        target: { case: "job", value: { queue: "beats" } },
        overlap: OverlapPolicy.ALLOW,
      },
    });
    const wf = await once("beat_wf", (n) => n >= 2n);
    expect(wf.lastStarted).toMatch(/^beat_wf@\d{8}T\d{6}Z$/);
    const started = wf.history.filter((r) => r.outcome === FireOutcome.STARTED);
    expect(started.length).toBeGreaterThanOrEqual(2);
    for (const r of started)
      expect((await c.workflows.getInstance({ instanceId: r.started })).instance?.workflow).toBe("beat");
    const job = await once("beat_job", (n) => n >= 2n);
    expect(job.history.at(-1)).toMatchObject({ outcome: FireOutcome.STARTED, started: job.lastStarted });

    expect((await c.schedules.pauseSchedule({ name: "beat_wf" })).schedule!.paused).toBe(true);
    expect((await c.schedules.pauseSchedule({ name: "beat_job" })).schedule!.paused).toBe(true);
    const fires = (await c.schedules.getSchedule({ name: "beat_job" })).schedule!.fires;
    await new Promise((r) => setTimeout(r, 1500));
    expect((await c.schedules.getSchedule({ name: "beat_job" })).schedule!.fires).toBe(fires);

    const updated = await c.schedules.updateSchedule({
      schedule: { name: "beat_job", cron: "0 0 1 1 *", target: { case: "job", value: { queue: "beats" } } },
    });
    expect(updated.schedule).toMatchObject({ cron: "0 0 1 1 *", paused: true });
    expect((await c.schedules.listSchedules({})).schedules.map((s) => s.name)).toEqual(["beat_job", "beat_wf"]);
    expect((await c.schedules.deleteSchedule({ name: "beat_job" })).deleted).toBe(true);
    expect((await c.schedules.listSchedules({})).schedules.map((s) => s.name)).toEqual(["beat_wf"]);
  }, 30_000);
});

describe("a failover of the maintenance leader", () => {
  it("fires each time once: the leader fires, and after it stops the other node fires the next", async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryStore();
    const nodes = [
      await startServer({ store, port: 0, clock, leaseTtlMs: 3000 }),
      await startServer({ store, port: 0, clock, leaseTtlMs: 3000 }),
    ];
    try {
      const c = clients(nodes[0]!.url);
      await c.queues.createQueue({ name: "ticks" });
      await c.schedules.createSchedule({
        schedule: {
          name: "tick",
          cron: "*/10 * * * * *",
          target: { case: "job", value: { queue: "ticks" } },
          overlap: OverlapPolicy.ALLOW,
        },
      });
      await clock.advance(3000); // both nodes see each other
      const leader = nodes.find((n) => n.membership.leads())!;
      const follower = nodes.find((n) => n !== leader)!;
      expect(follower.membership.leads()).toBe(false);
      await clock.advance(7000); // T0+10s fires on the leader
      await leader.stop();
      await clock.advance(60_000); // the follower leads now and fires T0+20s … T0+70s
      const s = (await clients(follower.url).schedules.getSchedule({ name: "tick" })).schedule!;
      expect(follower.maintenance.rounds.fires).toBeGreaterThan(0);
      const started = s.history.filter((r) => r.outcome === FireOutcome.STARTED).map((r) => timestampToMs(r.at));
      expect(started).toEqual([1, 2, 3, 4, 5, 6, 7].map((k) => T0 + k * 10_000));
      expect(s.history.some((r) => r.outcome === FireOutcome.MISSED)).toBe(false);
      const jobs = await clients(follower.url).queues.getQueue({ name: "ticks" });
      expect(jobs.queue!.stats!.pending).toBe(7n);
    } finally {
      for (const n of nodes) await n.stop();
    }
  });
});
