/**
 * The TypeScript driver's workflow and schedule ops (conformance/protocol.md): the SDK's
 * defineWorkflow builder and instance helpers, and its ScheduleService client, with the
 * conversions to and from the protocol's JSON.
 */
import { durationFromMs, type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";
import {
  CatchUp,
  defineWorkflow,
  externalEvent,
  FireOutcome,
  type Instance,
  InstanceJobState,
  InstanceState,
  OverlapPolicy,
  type RunlaterClient,
  RunOutcome,
  type Schedule,
  type WorkflowContext,
  type WorkflowEvent,
} from "@runlater/sdk";
import type {
  ExternalEventJson,
  InstanceJson,
  ScheduleJson,
  ScheduleSpecJson,
  SdkRequest,
  WorkflowContextJson,
  WorkflowEventJson,
  WorkflowJson,
} from "../../conformance/protocol.js";

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const bytes = (s: string | undefined) => (s === undefined ? undefined : new Uint8Array(Buffer.from(s, "base64")));
const ms = (t: Timestamp | undefined) => (t ? timestampDate(t).getTime() : null);

const eventJson = (e: WorkflowEvent): WorkflowEventJson => ({
  event_id: e.eventId,
  input: e.input,
  from_job: e.fromJob,
  from_run: e.fromRun,
  custom_status: e.customStatus,
  result_b64: b64(e.result),
  posted_at_ms: ms(e.postedAt),
});

export const workflowContextJson = (c: WorkflowContext | undefined): WorkflowContextJson | null =>
  c
    ? {
        workflow: c.workflow,
        version: c.version,
        instance_id: c.instanceId,
        job: c.job,
        run: c.run,
        triggered_by: c.triggeredBy.map(eventJson),
      }
    : null;

const instanceJson = (i: Instance): InstanceJson => ({
  instance_id: i.instanceId,
  workflow: i.workflow,
  version: i.version,
  state: InstanceState[i.state] as InstanceJson["state"],
  keep_open: i.keepOpen,
  created_at_ms: ms(i.createdAt),
  ended_at_ms: ms(i.endedAt),
  jobs: i.jobs.map((j) => ({
    name: j.name,
    state: InstanceJobState[j.state] as InstanceJson["jobs"][number]["state"],
    pending_events: j.pendingEvents.map(eventJson),
    runs: j.runs.map((r) => ({
      run: r.run,
      job_id: r.jobId,
      triggered_by: r.triggeredBy.map(eventJson),
      outcome: RunOutcome[r.outcome] as InstanceJson["jobs"][number]["runs"][number]["outcome"],
      custom_status: r.customStatus,
      result_b64: b64(r.result),
      queued_at_ms: ms(r.queuedAt),
      ended_at_ms: ms(r.endedAt),
    })),
    run_count: j.runCount,
    dropped_events: j.droppedEvents,
  })),
});

const scheduleJson = (s: Schedule | undefined): ScheduleJson | null =>
  s
    ? {
        name: s.name,
        cron: s.cron,
        overlap: OverlapPolicy[s.overlap] as ScheduleJson["overlap"],
        paused: s.paused,
        next_fire_at_ms: ms(s.nextFireAt),
        last_started: s.lastStarted,
        fires: Number(s.fires),
        history: s.history.map((f) => ({
          outcome: FireOutcome[f.outcome] as ScheduleJson["history"][number]["outcome"],
          at_ms: ms(f.at),
          through_ms: ms(f.through),
          fired_at_ms: ms(f.firedAt),
          started: f.started,
          previous: f.previous,
          error: f.error,
        })),
      }
    : null;

function builder(w: WorkflowJson) {
  const b = defineWorkflow(w.name);
  for (const j of w.jobs)
    b.job(j.name, {
      queue: j.queue,
      inputs: (j.inputs ?? []).map((i) => ("external" in i ? { external: i.external } : { job: i.job, seed: i.seed })),
      onFailure: j.on_failure === "CONTINUE" ? "continue" : j.on_failure === "ABORT" ? "abort" : undefined,
      body: bytes(j.body_b64),
      priority: j.priority,
      attemptsAllowed: j.attempts_allowed,
    });
  return b;
}

const eventOptions = (e: ExternalEventJson) => ({ customStatus: e.custom_status, result: bytes(e.result_b64) });

function scheduleMessage(s: ScheduleSpecJson) {
  return {
    name: s.name,
    cron: s.cron,
    timeZone: s.time_zone,
    target: s.workflow
      ? {
          case: "workflow" as const,
          value: {
            workflow: s.workflow.workflow,
            keepOpen: s.workflow.keep_open,
            events: (s.workflow.events ?? []).map((e) => externalEvent(e.input, eventOptions(e))),
          },
        }
      : {
          case: "job" as const,
          value: {
            queue: s.job?.queue,
            body: bytes(s.job?.body_b64),
            priority: s.job?.priority,
            attemptsAllowed: s.job?.attempts_allowed,
          },
        },
    overlap: s.overlap === undefined ? undefined : OverlapPolicy[s.overlap],
    catchUp: s.catch_up === undefined ? undefined : CatchUp[s.catch_up],
    catchUpWindow: s.catch_up_window_ms === undefined ? undefined : durationFromMs(s.catch_up_window_ms),
  };
}

/** Runs a workflow or schedule op; undefined if `r` is not one. */
export async function runWorkflowOp(c: RunlaterClient, r: SdkRequest): Promise<Record<string, unknown> | undefined> {
  const wf = c.workflows;
  const one = (i: Instance | undefined) => ({ instance: i ? instanceJson(i) : null });
  switch (r.op) {
    case "apply_workflow": {
      const res = await c.applyWorkflow(builder(r.workflow));
      const w = res.workflow;
      return {
        created: res.created,
        workflow: w && {
          name: w.name,
          version: w.version,
          jobs: w.jobs.map((j) => ({ name: j.name, queue: j.queue })),
        },
      };
    }
    case "start_instance":
      return one(
        await c.startInstance(r.workflow, {
          keepOpen: r.keep_open,
          events: Object.fromEntries((r.events ?? []).map((e) => [e.input, eventOptions(e)])),
        }),
      );
    case "post_event":
      return one(await c.postEvent(r.instance_id, r.event.input, eventOptions(r.event)));
    case "get_instance":
      return one(await c.getInstance(r.instance_id));
    case "wait_instance":
      return one(await c.waitForInstance(r.instance_id, { timeoutMs: r.timeout_ms, pollIntervalMs: 20 }));
    case "rerun_job":
      return one((await wf.rerunJob({ instanceId: r.instance_id, job: r.job, run: r.run })).instance);
    case "disable_job":
      return one((await wf.disableJob({ instanceId: r.instance_id, job: r.job })).instance);
    case "enable_job":
      return one((await wf.enableJob({ instanceId: r.instance_id, job: r.job })).instance);
    case "close_instance":
      return one((await wf.closeInstance({ instanceId: r.instance_id })).instance);
    case "cancel_instance":
      return one((await wf.cancelInstance({ instanceId: r.instance_id })).instance);
    case "create_schedule": {
      const res = await c.schedules.createSchedule({ schedule: scheduleMessage(r.schedule), paused: r.paused });
      return { created: res.created, schedule: scheduleJson(res.schedule) };
    }
    case "get_schedule":
      return { schedule: scheduleJson((await c.schedules.getSchedule({ name: r.name })).schedule) };
    default:
      return undefined;
  }
}
