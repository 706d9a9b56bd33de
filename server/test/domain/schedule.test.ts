/** Schedules alone (docs/workflows.md#schedules): validation, fire times, and the fire plan. Pure functions. */
import { describe, expect, it } from "vitest";
import type { RunlaterError } from "../../src/domain/errors.js";
import { parseJobId } from "../../src/domain/job-id.js";
import { limits } from "../../src/domain/limits.js";
import {
  fireInstanceId,
  fireJobUnique,
  fireTimesAfter,
  lastFireAtOrBefore,
  type Schedule,
  type ScheduleSpec,
  validateSchedule,
} from "../../src/domain/schedule.js";
import {
  createSchedule,
  pauseSchedule,
  planFire,
  resumeSchedule,
  updateSchedule,
} from "../../src/domain/schedule-transitions.js";

const T0 = Date.UTC(2030, 0, 1, 10, 0, 0);
const MIN = 60_000;
const HOUR = 60 * MIN;

function spec(over: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return {
    name: "hourly",
    cron: "0 * * * *",
    timeZone: "UTC",
    target: { kind: "workflow", workflow: "etl", events: [], keepOpen: false },
    overlap: "allow",
    catchUp: "none",
    catchUpWindowMs: 0,
    ...over,
  };
}

function refusal(f: () => unknown): RunlaterError {
  try {
    f();
  } catch (err) {
    return err as RunlaterError;
  }
  throw new Error("not refused");
}

const idFor = (at: number) => fireInstanceId("hourly", at);
const fire = (s: Schedule, now: number, previousRunning = false) => planFire(s, { now, previousRunning, idFor });

describe("validateSchedule", () => {
  it("takes 5 or 6 fields and nicknames, refuses other counts naming schedule.cron", () => {
    validateSchedule(spec({ cron: "*/5 * * * *" }));
    validateSchedule(spec({ cron: "30 */5 * * * *" }));
    validateSchedule(spec({ cron: "@daily" }));
    expect(refusal(() => validateSchedule(spec({ cron: "* * * *" }))).field).toBe("schedule.cron");
    expect(refusal(() => validateSchedule(spec({ cron: "* * * * * * *" }))).field).toBe("schedule.cron");
    expect(refusal(() => validateSchedule(spec({ cron: "" }))).message).toMatch(/cron is empty/);
  });

  it("bounds the cron's length at limits.scheduleCronMaxLength", () => {
    /** A valid cron of exactly n characters: a list of minutes, its first padded with zeros. */
    const ofLength = (n: number) => {
      let minutes = "0";
      for (let m = 1; `${minutes},${m} * * * *`.length <= n; m++) minutes += `,${m}`;
      return `${"0".repeat(n - `${minutes} * * * *`.length)}${minutes} * * * *`;
    };
    expect(ofLength(limits.scheduleCronMaxLength)).toHaveLength(limits.scheduleCronMaxLength);
    validateSchedule(spec({ cron: ofLength(limits.scheduleCronMaxLength) }));
    const over = refusal(() => validateSchedule(spec({ cron: ofLength(limits.scheduleCronMaxLength + 1) })));
    expect(over.field).toBe("schedule.cron");
    expect(over.message).toMatch(/at most 100/);
  });

  it("checks the time zone, the policies and the catch-up window at its bounds", () => {
    validateSchedule(spec({ timeZone: "Europe/Berlin" }));
    expect(refusal(() => validateSchedule(spec({ timeZone: "Mars/Olympus" }))).field).toBe("schedule.time_zone");
    expect(refusal(() => validateSchedule(spec({ timeZone: "x".repeat(65) }))).field).toBe("schedule.time_zone");
    expect(refusal(() => validateSchedule(spec({ overlap: "both" as never }))).field).toBe("schedule.overlap");
    expect(refusal(() => validateSchedule(spec({ catchUp: "all" as never }))).field).toBe("schedule.catch_up");
    const latest = (catchUpWindowMs: number) => spec({ catchUp: "latest", catchUpWindowMs });
    validateSchedule(latest(limits.scheduleCatchUpWindowMinMs));
    validateSchedule(latest(limits.scheduleCatchUpWindowMaxMs));
    expect(refusal(() => validateSchedule(latest(limits.scheduleCatchUpWindowMinMs - 1))).field).toBe(
      "schedule.catch_up_window",
    );
    expect(refusal(() => validateSchedule(latest(limits.scheduleCatchUpWindowMaxMs + 1))).field).toBe(
      "schedule.catch_up_window",
    );
  });

  it("checks the target: names, events at their bound, job fields", () => {
    const events = (n: number) =>
      Array.from({ length: n }, () => ({ input: "go", output: { customStatus: "", result: new Uint8Array() } }));
    const wf = (n: number) =>
      spec({ target: { kind: "workflow", workflow: "etl", events: events(n), keepOpen: false } });
    validateSchedule(wf(limits.scheduleEventsMax));
    expect(refusal(() => validateSchedule(wf(limits.scheduleEventsMax + 1))).field).toBe("schedule.workflow.events");
    expect(
      refusal(() =>
        validateSchedule(spec({ target: { kind: "workflow", workflow: "bad name", events: [], keepOpen: false } })),
      ).field,
    ).toBe("schedule.workflow");
    const job = (over: Partial<{ queue: string; priority: number; attemptsAllowed: number }>) =>
      spec({
        target: { kind: "job", queue: "emails", body: new Uint8Array(), priority: 0, attemptsAllowed: 0, ...over },
      });
    validateSchedule(job({}));
    expect(refusal(() => validateSchedule(job({ queue: "no-dash" }))).field).toBe("schedule.job.queue");
    expect(refusal(() => validateSchedule(job({ priority: limits.prioritiesMax + 1 }))).field).toBe(
      "schedule.job.priority",
    );
    expect(refusal(() => validateSchedule(job({ attemptsAllowed: limits.attemptsMax + 1 }))).field).toBe(
      "schedule.job.attempts_allowed",
    );
  });
});

describe("fire times", () => {
  it("are computed in the schedule's time zone", () => {
    const berlin = spec({ cron: "0 9 * * *", timeZone: "Europe/Berlin" });
    // 09:00 in Berlin is 08:00 UTC in winter.
    expect(fireTimesAfter(berlin, T0, 2)).toEqual([Date.UTC(2030, 0, 2, 8), Date.UTC(2030, 0, 3, 8)]);
    expect(lastFireAtOrBefore(berlin, Date.UTC(2030, 0, 2, 8))).toBe(Date.UTC(2030, 0, 2, 8));
  });

  it("derive ids from (schedule, time): a valid job id, a readable instance id", () => {
    expect(fireInstanceId("hourly", T0)).toBe("hourly@20300101T100000Z");
    const unique = fireJobUnique("hourly", T0);
    expect(unique).toBe(fireJobUnique("hourly", T0));
    expect(unique).not.toBe(fireJobUnique("daily", T0));
    expect(parseJobId(`emails.0.${unique}`)).toEqual({ queue: "emails", partition: 0 });
  });
});

describe("createSchedule, updateSchedule, pause, resume", () => {
  it("starts at the first time after now; a paused one has none", () => {
    expect(createSchedule(spec(), { now: T0, paused: false }).nextFireAt).toBe(T0 + HOUR);
    expect(createSchedule(spec(), { now: T0, paused: true }).nextFireAt).toBe(0);
    expect(refusal(() => createSchedule(spec({ cron: "0 0 30 2 *" }), { now: T0, paused: false })).message).toMatch(
      /never fires/,
    );
  });

  it("a new cron counts from now; another change keeps the next time", () => {
    const s = createSchedule(spec(), { now: T0, paused: false });
    const sameTime = updateSchedule(s, spec({ overlap: "skip" }), { now: T0 + 5 * MIN });
    expect(sameTime).toMatchObject({ nextFireAt: T0 + HOUR, overlap: "skip", rev: 2 });
    const retimed = updateSchedule(s, spec({ cron: "*/10 * * * *" }), { now: T0 + 5 * MIN });
    expect(retimed.nextFireAt).toBe(T0 + 10 * MIN);
    expect(refusal(() => updateSchedule(s, spec({ name: "other" }), { now: T0 })).field).toBe("schedule.name");
  });

  it("pause clears the next time; resume counts from now (paused times are not missed)", () => {
    const s = createSchedule(spec(), { now: T0, paused: false });
    const paused = pauseSchedule(s, { now: T0 });
    expect(paused).toMatchObject({ paused: true, nextFireAt: 0, rev: 2 });
    expect(pauseSchedule(paused, { now: T0 })).toBe(paused);
    expect(fire(paused, T0 + 5 * HOUR)).toBeUndefined();
    const resumed = resumeSchedule(paused, { now: T0 + 5 * HOUR + 1 });
    expect(resumed).toMatchObject({ paused: false, nextFireAt: T0 + 6 * HOUR, rev: 3 });
  });
});

describe("planFire", () => {
  const created = (over: Partial<ScheduleSpec> = {}) => createSchedule(spec(over), { now: T0, paused: false });

  it("does nothing before the next time; at it, starts with the derived id and moves on", () => {
    const s = created();
    expect(fire(s, T0 + HOUR - 1)).toBeUndefined();
    const plan = fire(s, T0 + HOUR)!;
    expect(plan).toMatchObject({ action: "start", at: T0 + HOUR, startedId: idFor(T0 + HOUR), cancel: "" });
    expect(plan.schedule).toMatchObject({ nextFireAt: T0 + 2 * HOUR, lastStarted: idFor(T0 + HOUR), fires: 1, rev: 2 });
    expect(plan.schedule.history).toEqual([
      { outcome: "started", at: T0 + HOUR, firedAt: T0 + HOUR, started: idFor(T0 + HOUR) },
    ]);
    expect(s.history).toEqual([]); // the argument is not changed
  });

  it("fires a time up to limits.scheduleOnTimeMs late (a failover); later, catch_up none misses it", () => {
    const s = created();
    expect(fire(s, T0 + HOUR + limits.scheduleOnTimeMs)!.action).toBe("start");
    const late = fire(s, T0 + HOUR + limits.scheduleOnTimeMs + 1)!;
    expect(late.action).toBe("none");
    expect(late.schedule.nextFireAt).toBe(T0 + 2 * HOUR);
    expect(late.schedule.history).toEqual([
      { outcome: "missed", at: T0 + HOUR, through: T0 + HOUR, firedAt: T0 + HOUR + limits.scheduleOnTimeMs + 1 },
    ]);
  });

  it("after downtime, catch_up none records the missed range and fires nothing", () => {
    const plan = fire(created(), T0 + 5 * HOUR + 30 * MIN)!;
    expect(plan.action).toBe("none");
    expect(plan.schedule.nextFireAt).toBe(T0 + 6 * HOUR);
    expect(plan.schedule.history[0]).toMatchObject({ outcome: "missed", at: T0 + HOUR, through: T0 + 5 * HOUR });
    expect(plan.schedule.fires).toBe(0);
  });

  it("after downtime, catch_up latest fires once for the most recent time, inside its window", () => {
    const s = created({ catchUp: "latest", catchUpWindowMs: 2 * HOUR });
    const plan = fire(s, T0 + 5 * HOUR + 30 * MIN)!;
    expect(plan).toMatchObject({ action: "start", at: T0 + 5 * HOUR, startedId: idFor(T0 + 5 * HOUR) });
    expect(plan.schedule.history).toEqual([
      { outcome: "missed", at: T0 + HOUR, through: T0 + 4 * HOUR, firedAt: T0 + 5 * HOUR + 30 * MIN },
      { outcome: "started", at: T0 + 5 * HOUR, firedAt: T0 + 5 * HOUR + 30 * MIN, started: idFor(T0 + 5 * HOUR) },
    ]);
    expect(plan.schedule.nextFireAt).toBe(T0 + 6 * HOUR);
    // At the window's bound it still fires; one millisecond past, the latest time is missed too.
    const outside = created({ catchUp: "latest", catchUpWindowMs: 20 * MIN });
    expect(fire(outside, T0 + 5 * HOUR + 20 * MIN)!.action).toBe("start");
    expect(fire(outside, T0 + 5 * HOUR + 20 * MIN + 1)!.action).toBe("none");
  });

  it("overlap: skip records a skip, allow starts anyway, cancel_previous names the previous run", () => {
    const first = (overlap: ScheduleSpec["overlap"]) => fire(created({ overlap }), T0 + HOUR)!.schedule;
    const skip = fire(first("skip"), T0 + 2 * HOUR, true)!;
    expect(skip).toMatchObject({ action: "skip", at: T0 + 2 * HOUR, startedId: "" });
    expect(skip.schedule).toMatchObject({ lastStarted: idFor(T0 + HOUR), fires: 1, nextFireAt: T0 + 3 * HOUR });
    expect(skip.schedule.history.at(-1)).toMatchObject({ outcome: "skipped", previous: idFor(T0 + HOUR) });
    expect(fire(first("skip"), T0 + 2 * HOUR, false)!.action).toBe("start");
    expect(fire(first("allow"), T0 + 2 * HOUR, true)).toMatchObject({ action: "start", cancel: "" });
    const cancel = fire(first("cancel_previous"), T0 + 2 * HOUR, true)!;
    expect(cancel).toMatchObject({ action: "start", cancel: idFor(T0 + HOUR), startedId: idFor(T0 + 2 * HOUR) });
    expect(cancel.schedule.history.at(-1)).toMatchObject({ outcome: "started", previous: idFor(T0 + HOUR) });
  });

  it("keeps at most limits.scheduleHistoryKept fires", () => {
    let s = created({ cron: "* * * * *" });
    for (let i = 1; i <= limits.scheduleHistoryKept + 3; i++) s = fire(s, s.nextFireAt)!.schedule;
    expect(s.history).toHaveLength(limits.scheduleHistoryKept);
    expect(s.fires).toBe(limits.scheduleHistoryKept + 3);
    expect(s.history.at(-1)!.at).toBe(T0 + (limits.scheduleHistoryKept + 3) * MIN);
  });
});
