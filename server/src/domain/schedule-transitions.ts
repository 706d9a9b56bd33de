/**
 * What happens to a schedule (docs/workflows.md#schedules): created, changed, paused,
 * resumed, and fired. Each function is pure: it takes the schedule and returns the next
 * one (never changing its argument). A fire's plan says what to start; the store applies
 * the schedule it returns in the same step as the start (Store.schedules.scheduleFire).
 */
import { invalidArgument } from "./errors.js";
import { limits } from "./limits.js";
import {
  type FireRecord,
  lastFireAtOrBefore,
  nextFireAfter,
  type Schedule,
  type ScheduleSpec,
  validateSchedule,
} from "./schedule.js";

export function createSchedule(spec: ScheduleSpec, o: { now: number; paused: boolean }): Schedule {
  validateSchedule(spec);
  const nextFireAt = o.paused ? 0 : firstFire(spec, o.now);
  return {
    ...spec,
    paused: o.paused,
    rev: 1,
    createdAt: o.now,
    updatedAt: o.now,
    nextFireAt,
    lastStarted: "",
    fires: 0,
    history: [],
  };
}

/**
 * A changed definition. A new cron or time zone counts from now; otherwise the next fire
 * time stays (a schedule that fires at 02:00 still fires then after its target changed).
 */
export function updateSchedule(current: Schedule, spec: ScheduleSpec, o: { now: number }): Schedule {
  validateSchedule(spec);
  if (spec.name !== current.name) throw invalidArgument("schedule.name", "a schedule's name cannot change");
  const retimed = spec.cron !== current.cron || spec.timeZone !== current.timeZone;
  const nextFireAt = current.paused ? 0 : retimed ? firstFire(spec, o.now) : current.nextFireAt;
  return { ...current, ...spec, nextFireAt, rev: current.rev + 1, updatedAt: o.now };
}

/** A paused schedule does not fire; the times that pass meanwhile are not missed, just not fired. */
export function pauseSchedule(current: Schedule, o: { now: number }): Schedule {
  if (current.paused) return current;
  return { ...current, paused: true, nextFireAt: 0, rev: current.rev + 1, updatedAt: o.now };
}

/** Fires again from the first time after now. */
export function resumeSchedule(current: Schedule, o: { now: number }): Schedule {
  if (!current.paused) return current;
  return { ...current, paused: false, nextFireAt: firstFire(current, o.now), rev: current.rev + 1, updatedAt: o.now };
}

export function isDue(s: Schedule, now: number): boolean {
  return !s.paused && s.nextFireAt !== 0 && s.nextFireAt <= now;
}

/** What a due schedule's fire does. */
export interface FirePlan {
  /** start: start the target (id `startedId`); skip: the previous run still runs (overlap skip); none: the time was missed. */
  action: "start" | "skip" | "none";
  /** The fire time (0 for none). */
  at: number;
  /** With action start: the id of what it starts, derived from (schedule, at). */
  startedId: string;
  /** With action start under overlap cancel_previous: the previous run to cancel first. */
  cancel: string;
  /** The schedule after the fire: next fire time, history, last started. */
  schedule: Schedule;
}

/**
 * Plans the fire of a due schedule at `now` (undefined if it is not due). The time that
 * fires is the most recent due one; older due times are recorded as missed. It fires if
 * it is at most limits.scheduleOnTimeMs late, or, with catch_up "latest", at most
 * catch_up_window late; else it too is missed. `previousRunning` says whether what the
 * last fire started (schedule.lastStarted) still runs; `idFor` gives the id of what a fire
 * at a time starts.
 */
export function planFire(
  s: Schedule,
  o: { now: number; previousRunning: boolean; idFor: (at: number) => string },
): FirePlan | undefined {
  if (!isDue(s, o.now)) return undefined;
  const latest = Math.max(s.nextFireAt, lastFireAtOrBefore(s, o.now));
  const next: Schedule = {
    ...s,
    nextFireAt: nextFireAfter(s, o.now),
    rev: s.rev + 1,
    updatedAt: o.now,
    history: [...s.history],
  };
  const window = s.catchUp === "latest" ? s.catchUpWindowMs : limits.scheduleOnTimeMs;
  if (o.now - latest > window) {
    record(next, { outcome: "missed", at: s.nextFireAt, through: latest, firedAt: o.now });
    return { action: "none", at: 0, startedId: "", cancel: "", schedule: next };
  }
  if (latest > s.nextFireAt) {
    const before = lastFireAtOrBefore(s, latest - 1);
    record(next, { outcome: "missed", at: s.nextFireAt, through: Math.max(before, s.nextFireAt), firedAt: o.now });
  }
  const previous = o.previousRunning && s.lastStarted !== "" ? s.lastStarted : "";
  if (previous !== "" && s.overlap === "skip") {
    record(next, { outcome: "skipped", at: latest, firedAt: o.now, previous });
    return { action: "skip", at: latest, startedId: "", cancel: "", schedule: next };
  }
  const startedId = o.idFor(latest);
  const cancel = s.overlap === "cancel_previous" ? previous : "";
  record(next, {
    outcome: "started",
    at: latest,
    firedAt: o.now,
    started: startedId,
    ...(cancel !== "" ? { previous: cancel } : {}),
  });
  next.lastStarted = startedId;
  next.fires++;
  return { action: "start", at: latest, startedId, cancel, schedule: next };
}

/**
 * A planned start that could not be made (its workflow or queue is gone, or no longer
 * takes it): the fire is recorded as failed with `error`, and the schedule still moves on
 * (a fire that can never succeed must not hold the schedule at its time).
 */
export function fireFailed(before: Schedule, plan: FirePlan, error: string, o: { now: number }): Schedule {
  const history = plan.schedule.history.filter((r) => !(r.outcome === "started" && r.at === plan.at));
  const failed: Schedule = {
    ...plan.schedule,
    lastStarted: before.lastStarted,
    fires: before.fires,
    history,
  };
  record(failed, { outcome: "failed", at: plan.at, firedAt: o.now, error: error.slice(0, 500) });
  return failed;
}

function record(s: Schedule, entry: FireRecord): void {
  s.history.push(entry);
  if (s.history.length > limits.scheduleHistoryKept) s.history.splice(0, s.history.length - limits.scheduleHistoryKept);
}

function firstFire(spec: ScheduleSpec, now: number): number {
  const at = nextFireAfter(spec, now);
  if (at === 0) throw invalidArgument("schedule.cron", `cron "${spec.cron}" never fires after now`);
  return at;
}
