/**
 * Schedules from code (docs/workflows.md#schedules): scheduleMessage() turns the options of
 * client.createSchedule / client.updateSchedule into the runlater.v1.Schedule they send.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { encodeBody, type JobBody } from "./body.js";
import { CatchUp, OverlapPolicy, type Schedule, ScheduleSchema } from "./gen/runlater/v1/schedule_service_pb.js";
import { type ExternalEventOptions, externalEvent } from "./workflows.js";

/** A schedule's definition: a cron, and a workflow to start or a queue to enqueue on. */
export interface ScheduleOptions {
  /** Letters, digits, _ . - (1 to 64). */
  name: string;
  /** 5 fields, 6 (seconds first) or a nickname (@hourly, @daily, ...); at most 100 characters. */
  cron: string;
  /** IANA time zone the cron is read in (e.g. Europe/Berlin); default UTC. */
  timeZone?: string;
  /** Each fire starts an instance of this workflow's latest version (give this or `queue`). */
  workflow?: string;
  /** With `workflow`: events for its external inputs, by input name (at most 10). */
  events?: Readonly<Record<string, ExternalEventOptions>>;
  /** With `workflow`: start each instance keep-open. */
  keepOpen?: boolean;
  /** Each fire enqueues a job on this queue (give this or `workflow`). */
  queue?: string;
  /** With `queue`: the job's body (bytes, text as UTF-8, or a JSON value). */
  body?: JobBody;
  /** With `queue`: the job's priority; default 1 (the highest). */
  priority?: number;
  /** With `queue`: the job's attempts; default the queue's. */
  attemptsAllowed?: number;
  /** What a fire does while the previous fire's work still runs; default SKIP. */
  overlap?: OverlapPolicy;
  /**
   * After downtime, fire the latest missed time if it is at most this late (1 minute to 7
   * days); unset: missed times are skipped.
   */
  catchUpWindowMs?: number;
}

/** Options of client.createSchedule. */
export interface CreateScheduleOptions extends ScheduleOptions {
  /** Create it paused (resumeSchedule starts it). */
  paused?: boolean;
}

/** The runlater.v1.Schedule a definition sends; a RangeError unless exactly one target is set. */
export function scheduleMessage(o: ScheduleOptions): Schedule {
  if ((o.workflow === undefined) === (o.queue === undefined))
    throw new RangeError(`schedule ${o.name}: give exactly one of workflow (to start) or queue (to enqueue on)`);
  const target =
    o.workflow !== undefined
      ? {
          case: "workflow" as const,
          value: {
            workflow: o.workflow,
            keepOpen: o.keepOpen,
            events: Object.entries(o.events ?? {}).map(([input, e]) => externalEvent(input, e)),
          },
        }
      : {
          case: "job" as const,
          value: {
            queue: o.queue,
            body: o.body === undefined ? undefined : encodeBody(o.body),
            priority: o.priority,
            attemptsAllowed: o.attemptsAllowed,
          },
        };
  const catchUp = o.catchUpWindowMs !== undefined;
  return create(ScheduleSchema, {
    name: o.name,
    cron: o.cron,
    timeZone: o.timeZone,
    target,
    overlap: o.overlap ?? OverlapPolicy.SKIP,
    catchUp: catchUp ? CatchUp.LATEST : CatchUp.NONE,
    catchUpWindow: catchUp ? durationFromMs(o.catchUpWindowMs ?? 0) : undefined,
  });
}
