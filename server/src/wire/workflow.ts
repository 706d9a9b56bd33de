/** runlater.v1 workflow messages ↔ the domain's workflow values (docs/workflows.md). */
import { create } from "@bufbuild/protobuf";
import {
  FailurePolicy,
  type Instance,
  type InstanceJob as InstanceJobMessage,
  InstanceJobSchema,
  InstanceJobState,
  InstanceSchema,
  InstanceState,
  type JobRun as JobRunMessage,
  JobRunSchema,
  RunOutcome,
  type Workflow,
  type WorkflowContext,
  WorkflowContextSchema,
  type WorkflowEvent as WorkflowEventMessage,
  WorkflowEventSchema,
  WorkflowSchema,
} from "@runlater/sdk/gen/workflow_service_pb.js";
import { decodeJobContext, encodeJobContext } from "../domain/workflow-codec.js";
import { type InputSource, inputKey, type WorkflowDef, type WorkflowJobDef } from "../domain/workflow-definition.js";
import type {
  InstanceState as DomainInstanceState,
  RunOutcome as DomainRunOutcome,
  JobRun,
  WorkflowEvent,
  WorkflowInstance,
} from "../domain/workflow-transitions.js";
import { msToTimestamp, timestampToMs } from "./time.js";

const EMPTY = new Uint8Array();

/** A definition as a client sends it (version and created_at are the server's). */
export function workflowFromProto(w: Workflow | undefined): Omit<WorkflowDef, "version"> {
  return {
    name: w?.name ?? "",
    jobs: (w?.jobs ?? []).map(
      (j): WorkflowJobDef => ({
        name: j.name,
        queue: j.queue,
        inputs: j.inputs.map(
          (i): InputSource =>
            i.source.case === "external"
              ? { external: i.source.value }
              : { job: i.source.value ?? "", ...(i.seed ? { seed: true } : {}) },
        ),
        onFailure: j.onFailure === FailurePolicy.CONTINUE ? "continue" : "abort",
        body: j.body,
        priority: j.priority,
        attemptsAllowed: j.attemptsAllowed,
      }),
    ),
  };
}

export function workflowToProto(def: WorkflowDef, createdAt: number): Workflow {
  return create(WorkflowSchema, {
    name: def.name,
    version: def.version,
    createdAt: msToTimestamp(createdAt),
    jobs: def.jobs.map((j) => ({
      name: j.name,
      queue: j.queue,
      inputs: j.inputs.map((i) =>
        "external" in i
          ? { source: { case: "external" as const, value: i.external } }
          : { source: { case: "job" as const, value: i.job }, seed: i.seed === true },
      ),
      onFailure: j.onFailure === "continue" ? FailurePolicy.CONTINUE : FailurePolicy.ABORT,
      body: j.body,
      priority: j.priority,
      attemptsAllowed: j.attemptsAllowed,
    })),
  });
}

const instanceStates: Record<DomainInstanceState, InstanceState> = {
  running: InstanceState.RUNNING,
  succeeded: InstanceState.SUCCEEDED,
  failed: InstanceState.FAILED,
  aborted: InstanceState.ABORTED,
  cancelled: InstanceState.CANCELLED,
};

export function instanceStateFromProto(state: InstanceState): DomainInstanceState | undefined {
  const found = Object.entries(instanceStates).find(([, s]) => s === state);
  return found?.[0] as DomainInstanceState | undefined;
}

const runOutcomes: Record<DomainRunOutcome, RunOutcome> = {
  queued: RunOutcome.QUEUED,
  succeeded: RunOutcome.SUCCEEDED,
  failed: RunOutcome.FAILED,
  abandoned: RunOutcome.ABANDONED,
};

export function eventToProto(input: string, e: WorkflowEvent): WorkflowEventMessage {
  return create(WorkflowEventSchema, {
    eventId: e.id,
    input,
    fromJob: e.from?.job ?? "",
    fromRun: e.from?.run ?? 0,
    customStatus: e.customStatus,
    result: e.result,
    postedAt: msToTimestamp(e.postedAt),
  });
}

function runToProto(r: JobRun): JobRunMessage {
  return create(JobRunSchema, {
    run: r.run,
    jobId: r.queueJobId,
    triggeredBy: r.triggeredBy.map((t) => eventToProto(t.input, t.event)),
    outcome: runOutcomes[r.outcome],
    customStatus: r.customStatus,
    result: r.result,
    queuedAt: msToTimestamp(r.queuedAt),
    endedAt: msToTimestamp(r.endedAt),
    trimmed: r.trimmed === true,
  });
}

/**
 * An instance as clients see it. A queued job is RUNNABLE until a worker holds its queue
 * job: `running` names the queue jobs that are RUNNING now (empty: leave the jobs out).
 */
export function instanceToProto(
  instance: WorkflowInstance,
  o: { withJobs: boolean; running?: ReadonlySet<string> },
): Instance {
  const jobs: InstanceJobMessage[] = o.withJobs
    ? Object.entries(instance.jobs).map(([name, job]) => {
        const current = job.runs[job.runs.length - 1];
        const state =
          job.state === "disabled"
            ? InstanceJobState.DISABLED
            : job.state === "idle"
              ? InstanceJobState.WAITING
              : current && o.running?.has(current.queueJobId)
                ? InstanceJobState.RUNNING
                : InstanceJobState.RUNNABLE;
        return create(InstanceJobSchema, {
          name,
          state,
          pendingEvents: Object.entries(job.inputs).flatMap(([input, events]) =>
            events.map((e) => eventToProto(input, e)),
          ),
          runs: job.runs.map(runToProto),
          runCount: job.runCount,
          droppedEvents: job.droppedEvents,
        });
      })
    : [];
  return create(InstanceSchema, {
    instanceId: instance.id,
    workflow: instance.workflow,
    version: instance.version,
    state: instanceStates[instance.state],
    keepOpen: instance.keepOpen,
    createdAt: msToTimestamp(instance.createdAt),
    endedAt: msToTimestamp(instance.endedAt),
    jobs,
  });
}

/** The WorkflowContext of a handed-out job, from its record's stored context. */
export function jobContextToProto(stored: string | undefined): WorkflowContext | undefined {
  if (stored === undefined) return undefined;
  const ctx = decodeJobContext(stored);
  return create(WorkflowContextSchema, {
    workflow: ctx.workflow,
    version: ctx.version,
    instanceId: ctx.instanceId,
    job: ctx.job,
    run: ctx.run,
    triggeredBy: ctx.triggeredBy.map((t) => eventToProto(t.input, t.event)),
  });
}

/** A forwarded job's context read back (cluster/peers.ts), as stores keep it. */
export function jobContextFromProto(ctx: WorkflowContext | undefined): string | undefined {
  if (!ctx) return undefined;
  return encodeJobContext({
    workflow: ctx.workflow,
    version: ctx.version,
    instanceId: ctx.instanceId,
    job: ctx.job,
    run: ctx.run,
    triggeredBy: ctx.triggeredBy.map((e) => ({
      input: e.input,
      event: {
        id: e.eventId,
        postedAt: timestampToMs(e.postedAt) ?? 0,
        ...(e.fromJob ? { from: { job: e.fromJob, run: e.fromRun } } : {}),
        customStatus: e.customStatus,
        result: e.result ?? EMPTY,
      },
    })),
  });
}

export { inputKey };
