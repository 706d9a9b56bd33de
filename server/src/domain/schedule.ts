/**
 * A schedule (docs/workflows.md#schedules): a cron expression in a time zone that starts a
 * workflow instance or enqueues a plain job, with an overlap policy and a catch-up rule.
 * This module validates a schedule as a client sends it and computes its fire times
 * (croner); schedule-transitions.ts decides what each fire does.
 */
import { createHash } from "node:crypto";
import { Cron } from "croner";
import { invalidArgument } from "./errors.js";
import { limits } from "./limits.js";
import { validateQueueName } from "./queue-config.js";
import { checkName } from "./workflow-definition.js";
import type { Output } from "./workflow-transitions.js";

/** What to do when a fire comes while what the previous fire started still runs. */
export type OverlapPolicy = "skip" | "allow" | "cancel_previous";

/** What to do about fire times missed while no node could fire (downtime). */
export type CatchUp = "none" | "latest";

export type ScheduleTarget =
  | {
      kind: "workflow";
      workflow: string;
      /** Posted to external inputs of every instance it starts. */
      events: Array<{ input: string; output: Output }>;
      keepOpen: boolean;
    }
  | {
      kind: "job";
      queue: string;
      body: Uint8Array;
      /** 0: 1 (the highest). */
      priority: number;
      /** 0: the queue's default. */
      attemptsAllowed: number;
    };

/** A schedule as a client defines it. */
export interface ScheduleSpec {
  name: string;
  /** 5 fields (minute precision) or 6 (seconds first), or a nickname such as @daily. */
  cron: string;
  /** An IANA time zone ("UTC", "Europe/Berlin"). */
  timeZone: string;
  target: ScheduleTarget;
  overlap: OverlapPolicy;
  catchUp: CatchUp;
  /** With catchUp "latest": how old a missed time may be and still fire. */
  catchUpWindowMs: number;
}

/** One line of a schedule's history. */
export interface FireRecord {
  /**
   * started: what the fire starts was started (`started` names it); skipped: the previous
   * run still ran under overlap "skip"; missed: times from `at` through `through` passed
   * while no node could fire them, and were not caught up; failed: what it starts could
   * not be started (`error` says why: its workflow or queue is gone).
   */
  outcome: "started" | "skipped" | "missed" | "failed";
  /** The fire time (the first missed one for "missed"). */
  at: number;
  /** The last missed time ("missed" only). */
  through?: number;
  /** When the fire was recorded. */
  firedAt: number;
  /** The instance or job id it started ("started" only). */
  started?: string;
  /** The previous instance or job that was still running (skipped, or cancelled under cancel_previous). */
  previous?: string;
  /** Why it failed ("failed" only). */
  error?: string;
}

/** A schedule as stores keep it. Times are epoch ms. */
export interface Schedule extends ScheduleSpec {
  paused: boolean;
  /** Changes with every change: stores apply one only over the revision it was decided on. */
  rev: number;
  createdAt: number;
  updatedAt: number;
  /** The next fire time; 0 when there is none (paused, or the cron never fires again). Due when ≤ now. */
  nextFireAt: number;
  /** What the last fire started (an instance or job id), for the overlap policy; "" before the first. */
  lastStarted: string;
  /** Fires that started something. */
  fires: number;
  /** The latest fires, oldest first (at most limits.scheduleHistoryKept). */
  history: FireRecord[];
}

const OVERLAPS: readonly OverlapPolicy[] = ["skip", "allow", "cancel_previous"];
const CATCH_UPS: readonly CatchUp[] = ["none", "latest"];

/** The cron of a schedule; throws invalid_argument (field "schedule.cron" or "schedule.time_zone"). */
export function cronOf(spec: Pick<ScheduleSpec, "cron" | "timeZone">): Cron {
  let cron: Cron;
  try {
    cron = new Cron(spec.cron, { timezone: spec.timeZone, mode: "5-or-6-parts" });
  } catch (err) {
    throw invalidArgument(
      "schedule.cron",
      `cron "${spec.cron.slice(0, 120)}" is not a cron expression: ${(err as Error).message}`,
    );
  }
  try {
    // croner reads the time zone only when it computes a time.
    cron.nextRun(new Date(0));
  } catch (err) {
    throw invalidArgument("schedule.time_zone", `time_zone "${spec.timeZone}": ${(err as Error).message}`);
  }
  return cron;
}

/** The defaults of unset fields: time zone UTC; catch_up_window limits.scheduleCatchUpWindowDefaultMs under catch_up latest. */
export function withDefaults(spec: ScheduleSpec): ScheduleSpec {
  return {
    ...spec,
    timeZone: spec.timeZone || "UTC",
    // Without catch-up the window means nothing: it is not kept.
    catchUpWindowMs: spec.catchUp === "latest" ? spec.catchUpWindowMs || limits.scheduleCatchUpWindowDefaultMs : 0,
  };
}

/** Throws invalid_argument, naming the field, for anything a schedule may not be (the defaults already filled). */
export function validateSchedule(spec: ScheduleSpec): void {
  checkName(spec.name, "schedule.name", "schedule name");
  if (spec.cron.trim() === "")
    throw invalidArgument("schedule.cron", "cron is empty: give 5 or 6 fields, e.g. 0 * * * *");
  if (spec.cron.length > limits.scheduleCronMaxLength) {
    throw invalidArgument(
      "schedule.cron",
      `cron is ${spec.cron.length} characters; at most ${limits.scheduleCronMaxLength}`,
    );
  }
  validateTimeZone(spec.timeZone);
  cronOf(spec);
  if (!OVERLAPS.includes(spec.overlap))
    throw invalidArgument("schedule.overlap", `overlap must be one of ${OVERLAPS.join(", ")}`);
  if (!CATCH_UPS.includes(spec.catchUp))
    throw invalidArgument("schedule.catch_up", `catch_up must be one of ${CATCH_UPS.join(", ")}`);
  if (
    spec.catchUp === "latest" &&
    (spec.catchUpWindowMs < limits.scheduleCatchUpWindowMinMs ||
      spec.catchUpWindowMs > limits.scheduleCatchUpWindowMaxMs)
  ) {
    throw invalidArgument(
      "schedule.catch_up_window",
      `catch_up_window must be from ${limits.scheduleCatchUpWindowMinMs / 1000}s to ${limits.scheduleCatchUpWindowMaxMs / 86_400_000}d (0: ${limits.scheduleCatchUpWindowDefaultMs / 60_000}m)`,
    );
  }
  validateTarget(spec.target);
}

function validateTimeZone(timeZone: string): void {
  const field = "schedule.time_zone";
  if (timeZone.length === 0 || timeZone.length > limits.scheduleTimeZoneMaxLength)
    throw invalidArgument(field, `time_zone must be 1 to ${limits.scheduleTimeZoneMaxLength} characters`);
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch {
    throw invalidArgument(
      field,
      `time_zone "${timeZone}" is not an IANA time zone (e.g. UTC, Europe/Berlin, America/New_York)`,
    );
  }
}

function validateTarget(target: ScheduleTarget): void {
  if (target.kind === "workflow") {
    checkName(target.workflow, "schedule.workflow", "workflow name");
    if (target.events.length > limits.scheduleEventsMax) {
      throw invalidArgument(
        "schedule.workflow.events",
        `a schedule posts at most ${limits.scheduleEventsMax} events; this one has ${target.events.length}`,
      );
    }
    for (const [i, e] of target.events.entries()) {
      checkName(e.input, `schedule.workflow.events[${i}].input`, "external input name");
      if (e.output.result.length > limits.workflowResultBytesMax) {
        throw invalidArgument(
          `schedule.workflow.events[${i}].result`,
          `result is ${e.output.result.length} bytes; at most ${limits.workflowResultBytesMax}`,
        );
      }
    }
    return;
  }
  validateQueueName(target.queue, "schedule.job.queue");
  if (target.body.length > limits.maxBodyBytesMax)
    throw invalidArgument(
      "schedule.job.body",
      `body is ${target.body.length} bytes; at most ${limits.maxBodyBytesMax}`,
    );
  if (target.priority < 0 || target.priority > limits.prioritiesMax)
    throw invalidArgument("schedule.job.priority", `priority must be 0 (1) to ${limits.prioritiesMax}`);
  if (target.attemptsAllowed < 0 || target.attemptsAllowed > limits.attemptsMax) {
    throw invalidArgument(
      "schedule.job.attempts_allowed",
      `attempts_allowed must be 0 (the queue's default) to ${limits.attemptsMax}`,
    );
  }
}

/** The first fire time strictly after `after`, or 0 if the cron never fires again. */
export function nextFireAfter(spec: Pick<ScheduleSpec, "cron" | "timeZone">, after: number): number {
  return cronOf(spec).nextRun(new Date(after))?.getTime() ?? 0;
}

/** Up to `n` fire times strictly after `after`, in order. */
export function fireTimesAfter(spec: Pick<ScheduleSpec, "cron" | "timeZone">, after: number, n: number): number[] {
  return cronOf(spec)
    .nextRuns(n, new Date(after))
    .map((d) => d.getTime());
}

/** The next `n` fire times from the schedule's next one (none while it has none). */
export function upcomingFires(s: Schedule, n: number): number[] {
  if (s.nextFireAt === 0 || n <= 0) return [];
  return [s.nextFireAt, ...fireTimesAfter(s, s.nextFireAt, n - 1)];
}

/** The last fire time at or before `at`, or 0 if there is none. */
export function lastFireAtOrBefore(spec: Pick<ScheduleSpec, "cron" | "timeZone">, at: number): number {
  // croner's previous runs are strictly before the reference: one millisecond after `at` includes it.
  return (
    cronOf(spec)
      .previousRuns(1, new Date(at + 1))[0]
      ?.getTime() ?? 0
  );
}

/** The id of the workflow instance a schedule's fire at `at` starts: the same for every try of that fire. */
export function fireInstanceId(schedule: string, at: number): string {
  return `${schedule}@${new Date(at).toISOString().replace(/[-:]|\.\d{3}/g, "")}`;
}

/**
 * The unique part of the job id a schedule's fire at `at` enqueues (the engine adds
 * `<queue>.<partition>.`): the fire time and a hash of the schedule's name, base 36.
 */
export function fireJobUnique(schedule: string, at: number): string {
  const hash = createHash("sha1").update(schedule).digest().readBigUInt64BE(0).toString(36).padStart(13, "0");
  return `${at.toString(36)}s${hash}`;
}
