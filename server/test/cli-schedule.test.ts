import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { CatchUp, OverlapPolicy, ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliHarness, startHarness, tableRows } from "./cli-harness.js";

let h: CliHarness;
let schedules: ReturnType<typeof createClient<typeof ScheduleService>>;
beforeAll(async () => {
  h = await startHarness();
  schedules = createClient(ScheduleService, createConnectTransport({ baseUrl: h.server.url, httpVersion: "1.1" }));
  await h.queues.createQueue({ name: "sched_pings" });
  await h.run(["workflow", "apply", "-"], {
    stdin: "name: sched_wf\njobs:\n  - name: a\n    queue: sched_pings\n    inputs: [{external: go}]\n",
  });
});
afterAll(() => h.stop());

describe("runlater schedule", () => {
  it("creates a workflow schedule with every flag and shows it with its next times", async () => {
    const r = await h.run([
      "schedule",
      "create",
      "nightly",
      "--cron",
      "0 2 * * *",
      "--time-zone",
      "Europe/Berlin",
      "--workflow",
      "sched_wf",
      "--event",
      "go=today",
      "--keep-open",
      "--overlap",
      "cancel_previous",
      "--catch-up",
      "latest",
      "--catch-up-window",
      "2h",
    ]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^created schedule nightly\n/);
    expect(r.stdout).toMatch(/^event: +go=today$/m);
    expect(r.stdout).toMatch(/^catch-up: +latest \(window 2h\)$/m);
    const { schedule } = await schedules.getSchedule({ name: "nightly" });
    expect(schedule).toMatchObject({
      cron: "0 2 * * *",
      timeZone: "Europe/Berlin",
      overlap: OverlapPolicy.CANCEL_PREVIOUS,
      catchUp: CatchUp.LATEST,
    });
    expect(schedule!.target.case === "workflow" && schedule!.target.value.keepOpen).toBe(true);

    const shown = await h.run(["schedule", "show", "nightly", "--upcoming", "3"]);
    const upcoming = shown.stdout.split("upcoming:\n")[1]!.split("latest fires:")[0]!.trim().split("\n");
    expect(upcoming).toHaveLength(3);
    for (const line of upcoming) expect(timestampDate(schedule!.nextFireAt!).toISOString() <= line.trim()).toBe(true);
    expect(upcoming.every((l) => /T0[01]:00:00\.000Z$/.test(l.trim()))).toBe(true); // 02:00 Berlin is 01:00 or 00:00 UTC
    expect(shown.stdout).toMatch(/latest fires:\n {2}\(none yet\)/);
  });

  it("creates a job schedule paused, lists it, updates only the flags given, resumes, pauses, deletes", async () => {
    const created = await h.run([
      "schedule",
      "create",
      "ping",
      "--cron",
      "*/30 * * * * *",
      "--queue",
      "sched_pings",
      "--body",
      "ping",
      "--priority",
      "2",
      "--paused",
    ]);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^paused: +yes$/m);
    expect(created.stdout).toMatch(/^next fire: +-$/m);
    const list = await h.run(["schedule", "list"]);
    const row = tableRows(list.stdout).find((r) => r[0] === "ping")!;
    expect(row.slice(2)).toEqual(["UTC", "job on sched_pings", "-", "yes", "0", "-"]);

    const updated = await h.run(["schedule", "update", "ping", "--overlap", "allow", "--attempts", "3"]);
    expect(updated.code).toBe(0);
    const { schedule } = await schedules.getSchedule({ name: "ping" });
    expect(schedule).toMatchObject({ cron: "*/30 * * * * *", overlap: OverlapPolicy.ALLOW, paused: true });
    expect(schedule!.target.case === "job" && schedule!.target.value).toMatchObject({
      priority: 2,
      attemptsAllowed: 3,
    });

    const resumed = await h.run(["schedule", "resume", "ping"]);
    expect(resumed.stdout).toMatch(/^resumed schedule ping; next fire \d{4}-/);
    expect((await h.run(["schedule", "pause", "ping", "--json"])).stdout).toMatch(/"paused": true/);
    expect((await h.run(["schedule", "delete", "ping"])).stdout).toBe("deleted schedule ping\n");
    expect((await h.run(["schedule", "delete", "ping"])).stdout).toBe("schedule ping did not exist; nothing deleted\n");
  });

  it("refuses bad usage before calling, and passes on the server's refusals", async () => {
    const noCron = await h.run(["schedule", "create", "x", "--queue", "sched_pings"]);
    expect(noCron).toMatchObject({ code: 2 });
    expect(noCron.stderr).toMatch(/--cron is required/);
    const both = await h.run(["schedule", "create", "x", "--cron", "* * * * *", "--queue", "q", "--workflow", "w"]);
    expect(both.stderr).toMatch(/give --workflow or --queue, not both/);
    const mixed = await h.run(["schedule", "create", "x", "--cron", "* * * * *", "--workflow", "w", "--body", "b"]);
    expect(mixed.stderr).toMatch(/--body, --priority and --attempts go with --queue/);
    const badOverlap = await h.run([
      "schedule",
      "create",
      "x",
      "--cron",
      "* * * * *",
      "--queue",
      "q",
      "--overlap",
      "no",
    ]);
    expect(badOverlap.code).toBe(2);
    const badCron = await h.run(["schedule", "create", "x", "--cron", "99 * * * *", "--queue", "sched_pings"]);
    expect(badCron.code).toBe(1);
    expect(badCron.stderr).toMatch(/^error: invalid_argument: cron "99 \* \* \* \*" is not a cron expression/);
    const missing = await h.run(["schedule", "show", "ghost"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: not_found: schedule "ghost" does not exist/);
  });
});
