/**
 * The client's workflow and schedule helpers (docs/workflows.md) over the generated
 * WorkflowService and ScheduleService clients: everyday calls take plain arguments and
 * answer the instance or schedule itself, and list calls iterate across pages lazily.
 */
import type { Client } from "@connectrpc/connect";
import type { Schedule, ScheduleService } from "./gen/runlater/v1/schedule_service_pb.js";
import type {
  ApplyWorkflowResponse,
  Instance,
  InstanceState,
  Workflow,
  WorkflowService,
} from "./gen/runlater/v1/workflow_service_pb.js";
import { type PageOptions, paged, pageSize } from "./paging.js";
import { type CreateScheduleOptions, type ScheduleOptions, scheduleMessage } from "./schedules.js";
import {
  type ExternalEventOptions,
  externalEvent,
  pollUntilEnded,
  type StartInstanceOptions,
  type WaitForInstanceOptions,
  WorkflowBuilder,
} from "./workflows.js";

/** Options of client.listInstances. */
export interface ListInstancesOptions extends PageOptions {
  /** Only this workflow's instances; default every workflow's. */
  workflow?: string;
  /** Only instances in this state; default every state. */
  state?: InstanceState;
}

/** Options of client.getSchedule. */
export interface GetScheduleOptions {
  /** How many next fire times to list in `upcoming`: 1 to 100; default 5. */
  upcoming?: number;
}

/** What client.createSchedule did: the schedule as stored, and whether this call made it. */
export interface CreatedSchedule {
  schedule: Schedule;
  created: boolean;
}

export interface WorkflowCalls {
  /**
   * Defines a workflow or changes it (a new version if the definition differs from the
   * latest; created = false when it is the same).
   */
  applyWorkflow(workflow: WorkflowBuilder | Workflow): Promise<ApplyWorkflowResponse>;
  /** Starts an instance of the workflow's latest version, optionally with external events. */
  startInstance(workflow: string, options?: StartInstanceOptions): Promise<Instance>;
  /** Posts an event to an external input of a running instance; returns the instance after. */
  postEvent(instanceId: string, input: string, event?: ExternalEventOptions): Promise<Instance>;
  /** The instance with every job's state and runs. */
  getInstance(instanceId: string): Promise<Instance>;
  /**
   * Polls getInstance until the instance has ended (any state but RUNNING) and returns it;
   * a ConnectError DEADLINE_EXCEEDED if it still runs after timeoutMs (default 60 s).
   */
  waitForInstance(instanceId: string, options?: WaitForInstanceOptions): Promise<Instance>;
  /**
   * Instances, newest first, without their jobs (getInstance has them), fetched a page at a
   * time as the loop goes: `for await (const i of client.listInstances({ workflow }))`.
   * A RangeError at once for a pageSize outside 1..1,000.
   */
  listInstances(options?: ListInstancesOptions): AsyncIterable<Instance>;
  /** Ends a running instance (CANCELLED): its pending queue jobs are deleted. Idempotent. */
  cancelInstance(instanceId: string): Promise<Instance>;
  /** Lets a keepOpen instance end once nothing is runnable or running (at once if nothing is). */
  closeInstance(instanceId: string): Promise<Instance>;
  /** Posts the events that triggered run `run` of `job` again to the job's inputs. */
  rerunJob(instanceId: string, job: string, run: number): Promise<Instance>;
  /** Stops `job` of the instance from running (its current run is abandoned; events still gather). */
  disableJob(instanceId: string, job: string): Promise<Instance>;
  /** Lets a disabled job run again. */
  enableJob(instanceId: string, job: string): Promise<Instance>;
  /** Creates a schedule; one of that name that exists already is answered unchanged (created = false). */
  createSchedule(schedule: CreateScheduleOptions): Promise<CreatedSchedule>;
  /** The schedule with its next fire times and latest fires; NOT_FOUND if there is none. */
  getSchedule(name: string, options?: GetScheduleOptions): Promise<Schedule>;
  /** Schedules by name, a page at a time as the loop goes; a RangeError at once for a bad pageSize. */
  listSchedules(options?: PageOptions): AsyncIterable<Schedule>;
  /** Replaces a schedule's definition, by name (paused stays as it is); a new cron counts from now. */
  updateSchedule(schedule: ScheduleOptions): Promise<Schedule>;
  /** Stops a schedule from firing (times that pass meanwhile are not caught up). Idempotent. */
  pauseSchedule(name: string): Promise<Schedule>;
  /** Lets a paused schedule fire again, from the first time after now. Idempotent. */
  resumeSchedule(name: string): Promise<Schedule>;
  /** Deletes a schedule (what it started goes on); false if there was none. */
  deleteSchedule(name: string): Promise<boolean>;
}

function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`the server answered no ${what}`);
  return value;
}

export function workflowCalls(
  workflows: Client<typeof WorkflowService>,
  schedules: Client<typeof ScheduleService>,
): WorkflowCalls {
  const instance = async (call: Promise<{ instance?: Instance }>) => present((await call).instance, "instance");
  const schedule = async (call: Promise<{ schedule?: Schedule }>) => present((await call).schedule, "schedule");
  const getInstance = (instanceId: string) => instance(workflows.getInstance({ instanceId }));
  return {
    applyWorkflow: (w) => workflows.applyWorkflow({ workflow: w instanceof WorkflowBuilder ? w.build() : w }),
    // async: a bad event (externalEvent's RangeError) rejects the promise, never throws.
    startInstance: async (workflow, o = {}) =>
      instance(
        workflows.startInstance({
          workflow,
          keepOpen: o.keepOpen,
          events: Object.entries(o.events ?? {}).map(([input, e]) => externalEvent(input, e)),
        }),
      ),
    postEvent: async (instanceId, input, e = {}) =>
      instance(workflows.postEvent({ instanceId, event: externalEvent(input, e) })),
    getInstance,
    waitForInstance: (instanceId, o) => pollUntilEnded(instanceId, () => getInstance(instanceId), o),
    listInstances(o = {}) {
      const limit = pageSize(o); // checked here, not at the first next(): the caller's stack
      return paged(async (pageToken) => {
        const page = await workflows.listInstances({ workflow: o.workflow, state: o.state, limit, pageToken });
        return { items: page.instances, nextPageToken: page.nextPageToken };
      });
    },
    cancelInstance: (instanceId) => instance(workflows.cancelInstance({ instanceId })),
    closeInstance: (instanceId) => instance(workflows.closeInstance({ instanceId })),
    rerunJob: (instanceId, job, run) => instance(workflows.rerunJob({ instanceId, job, run })),
    disableJob: (instanceId, job) => instance(workflows.disableJob({ instanceId, job })),
    enableJob: (instanceId, job) => instance(workflows.enableJob({ instanceId, job })),
    async createSchedule(o) {
      const answer = await schedules.createSchedule({ schedule: scheduleMessage(o), paused: o.paused });
      return { schedule: present(answer.schedule, "schedule"), created: answer.created };
    },
    getSchedule: (name, o = {}) => schedule(schedules.getSchedule({ name, upcoming: o.upcoming })),
    listSchedules(o = {}) {
      const limit = pageSize(o);
      return paged(async (pageToken) => {
        const page = await schedules.listSchedules({ limit, pageToken });
        return { items: page.schedules, nextPageToken: page.nextPageToken };
      });
    },
    updateSchedule: async (o) => schedule(schedules.updateSchedule({ schedule: scheduleMessage(o) })),
    pauseSchedule: (name) => schedule(schedules.pauseSchedule({ name })),
    resumeSchedule: (name) => schedule(schedules.resumeSchedule({ name })),
    deleteSchedule: async (name) => (await schedules.deleteSchedule({ name })).deleted,
  };
}
