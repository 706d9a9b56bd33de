/** runlater.v1 schedule messages ↔ the domain's schedules (docs/workflows.md#schedules). */
import { create } from "@bufbuild/protobuf";
import {
  CatchUp,
  FireOutcome,
  OverlapPolicy,
  type Schedule as ScheduleMessage,
  ScheduleSchema,
} from "@runlater/sdk/gen/schedule_service_pb.js";
import { invalidArgument } from "../domain/errors.js";
import type { FireRecord, Schedule, ScheduleSpec, ScheduleTarget } from "../domain/schedule.js";
import { durationToMs, msToDuration, msToTimestamp } from "./time.js";

const EMPTY = new Uint8Array();

const overlaps: Record<ScheduleSpec["overlap"], OverlapPolicy> = {
  skip: OverlapPolicy.SKIP,
  allow: OverlapPolicy.ALLOW,
  cancel_previous: OverlapPolicy.CANCEL_PREVIOUS,
};

const outcomes: Record<FireRecord["outcome"], FireOutcome> = {
  started: FireOutcome.STARTED,
  skipped: FireOutcome.SKIPPED,
  missed: FireOutcome.MISSED,
  failed: FireOutcome.FAILED,
};

/** A schedule's definition as a client sends it (the server-set fields are ignored). */
export function scheduleFromProto(s: ScheduleMessage | undefined): ScheduleSpec {
  if (!s) throw invalidArgument("schedule", "schedule is missing: send its name, cron and target");
  let target: ScheduleTarget;
  switch (s.target.case) {
    case "workflow":
      target = {
        kind: "workflow",
        workflow: s.target.value.workflow,
        events: s.target.value.events.map((e) => ({
          input: e.input,
          output: { customStatus: e.customStatus, result: e.result ?? EMPTY },
        })),
        keepOpen: s.target.value.keepOpen,
      };
      break;
    case "job":
      target = {
        kind: "job",
        queue: s.target.value.queue,
        body: s.target.value.body,
        priority: s.target.value.priority,
        attemptsAllowed: s.target.value.attemptsAllowed,
      };
      break;
    default:
      throw invalidArgument("schedule.target", "say what each fire starts: schedule.workflow or schedule.job");
  }
  return {
    name: s.name,
    cron: s.cron,
    timeZone: s.timeZone,
    target,
    overlap:
      s.overlap === OverlapPolicy.ALLOW
        ? "allow"
        : s.overlap === OverlapPolicy.CANCEL_PREVIOUS
          ? "cancel_previous"
          : "skip",
    catchUp: s.catchUp === CatchUp.LATEST ? "latest" : "none",
    catchUpWindowMs: durationToMs(s.catchUpWindow, "schedule.catch_up_window") ?? 0,
  };
}

/** A schedule as clients see it, with `upcoming` as its next fire times. */
export function scheduleToProto(s: Schedule, upcoming: number[] = []): ScheduleMessage {
  const t = s.target;
  return create(ScheduleSchema, {
    name: s.name,
    cron: s.cron,
    timeZone: s.timeZone,
    target:
      t.kind === "workflow"
        ? {
            case: "workflow",
            value: {
              workflow: t.workflow,
              events: t.events.map((e) => ({
                input: e.input,
                customStatus: e.output.customStatus,
                result: e.output.result,
              })),
              keepOpen: t.keepOpen,
            },
          }
        : {
            case: "job",
            value: { queue: t.queue, body: t.body, priority: t.priority, attemptsAllowed: t.attemptsAllowed },
          },
    overlap: overlaps[s.overlap],
    catchUp: s.catchUp === "latest" ? CatchUp.LATEST : CatchUp.NONE,
    catchUpWindow: s.catchUp === "latest" ? msToDuration(s.catchUpWindowMs) : undefined,
    paused: s.paused,
    nextFireAt: msToTimestamp(s.nextFireAt),
    upcoming: upcoming.map((ms) => msToTimestamp(ms)!),
    lastStarted: s.lastStarted,
    fires: BigInt(s.fires),
    history: s.history.map((r) => ({
      outcome: outcomes[r.outcome],
      at: msToTimestamp(r.at),
      through: r.through === undefined ? undefined : msToTimestamp(r.through),
      firedAt: msToTimestamp(r.firedAt),
      started: r.started ?? "",
      previous: r.previous ?? "",
      error: r.error ?? "",
    })),
    createdAt: msToTimestamp(s.createdAt),
    updatedAt: msToTimestamp(s.updatedAt),
  });
}
