/**
 * Store.workflows and Store.schedules of the SQLite store, on the server's thread: each
 * method sends one operation to the database's thread (workflows.ts, schedules.ts), so each
 * is one savepoint of a group commit there, atomic as the interfaces ask (instanceApply: the
 * ACK fenced by its claim token, the instance over its revision, jobs inserted and
 * cancelled; scheduleFire: the schedule over its revision with what it starts). Records
 * cross as the text workflow-codec.ts makes of them, encoded and decoded here: the
 * database's thread, which every call waits on, only stores and reads strings.
 *
 * workflowList, the one read of a whole table, is a series of operations of
 * WORKFLOW_LIST_CHUNK definitions each, like the walks of store-functions.ts.
 */

import type { Schedule } from "../../domain/schedule.js";
import {
  decodeDefinition,
  decodeInstance,
  decodeSchedule,
  encodeDefinition,
  encodeInstance,
  encodeSchedule,
} from "../../domain/workflow-codec.js";
import type { WorkflowInstance } from "../../domain/workflow-transitions.js";
import type { FireStart, ScheduleStore, StoredWorkflow, WorkflowStore } from "../store.js";
import type { SqliteChannel } from "./channel.js";
import type { InstanceRow, WorkflowRow } from "./instance-writes.js";
import type { ScheduleRow } from "./schedules.js";

/** Definitions read per operation by workflowList. */
export const WORKFLOW_LIST_CHUNK = 100;

type P<S, K extends keyof S> = S[K] extends (p: infer A) => unknown ? A : never;

export class SqliteWorkflows implements WorkflowStore {
  constructor(private readonly channel: SqliteChannel) {}

  workflowInsert(p: P<WorkflowStore, "workflowInsert">): Promise<boolean> {
    return this.channel.call("workflowInsert", {
      name: p.def.name,
      version: p.def.version,
      definition: encodeDefinition(p.def),
      now: p.now,
    });
  }

  async workflowGet(p: P<WorkflowStore, "workflowGet">): Promise<StoredWorkflow | undefined> {
    const row = await this.channel.call("workflowGet", p);
    return row && storedWorkflow(row);
  }

  async workflowList(): Promise<StoredWorkflow[]> {
    const all: StoredWorkflow[] = [];
    let after: string | undefined;
    do {
      const chunk = await this.channel.call("workflowListChunk", { after, limit: WORKFLOW_LIST_CHUNK });
      all.push(...chunk.workflows.map(storedWorkflow));
      after = chunk.after;
    } while (after !== undefined);
    return all;
  }

  instanceInsert(p: P<WorkflowStore, "instanceInsert">): Promise<boolean> {
    return this.channel.call("instanceInsert", { instance: instanceRow(p.instance), jobs: p.jobs, now: p.now });
  }

  async instanceGet(p: P<WorkflowStore, "instanceGet">): Promise<WorkflowInstance | undefined> {
    const text = await this.channel.call("instanceGet", p);
    return text === undefined ? undefined : decodeInstance(text);
  }

  async instanceList(p: P<WorkflowStore, "instanceList">): Promise<WorkflowInstance[]> {
    return (await this.channel.call("instanceList", p)).map(decodeInstance);
  }

  instanceApply(p: P<WorkflowStore, "instanceApply">): ReturnType<WorkflowStore["instanceApply"]> {
    return this.channel.call("instanceApply", { ...p, instance: p.instance && instanceRow(p.instance) });
  }

  instanceDeleteEnded(p: P<WorkflowStore, "instanceDeleteEnded">): Promise<number> {
    return this.channel.call("instanceDeleteEnded", p);
  }
}

export class SqliteSchedules implements ScheduleStore {
  constructor(private readonly channel: SqliteChannel) {}

  scheduleInsert(p: P<ScheduleStore, "scheduleInsert">): ReturnType<ScheduleStore["scheduleInsert"]> {
    return this.channel.call("scheduleInsert", { schedule: scheduleRow(p.schedule), max: p.max });
  }

  async scheduleGet(p: P<ScheduleStore, "scheduleGet">): Promise<Schedule | undefined> {
    const text = await this.channel.call("scheduleGet", p);
    return text === undefined ? undefined : decodeSchedule(text);
  }

  async scheduleList(p: P<ScheduleStore, "scheduleList">): Promise<Schedule[]> {
    return (await this.channel.call("scheduleList", p)).map(decodeSchedule);
  }

  scheduleReplace(p: P<ScheduleStore, "scheduleReplace">): Promise<boolean> {
    return this.channel.call("scheduleReplace", { schedule: scheduleRow(p.schedule), rev: p.rev });
  }

  scheduleDelete(p: P<ScheduleStore, "scheduleDelete">): Promise<boolean> {
    return this.channel.call("scheduleDelete", p);
  }

  async scheduleDue(p: P<ScheduleStore, "scheduleDue">): Promise<{ due: Schedule[]; nextDueAt?: number }> {
    const { due, nextDueAt } = await this.channel.call("scheduleDue", p);
    const schedules = due.map(decodeSchedule);
    return nextDueAt === undefined ? { due: schedules } : { due: schedules, nextDueAt };
  }

  scheduleFire(p: P<ScheduleStore, "scheduleFire">): ReturnType<ScheduleStore["scheduleFire"]> {
    return this.channel.call("scheduleFire", {
      rev: p.rev,
      schedule: scheduleRow(p.schedule),
      start: p.start && fireStartRow(p.start),
      cancel: p.cancel,
      now: p.now,
    });
  }
}

function storedWorkflow(row: WorkflowRow): StoredWorkflow {
  return { def: decodeDefinition(row.definition), createdAt: row.createdAt };
}

function instanceRow(i: WorkflowInstance): InstanceRow {
  return {
    id: i.id,
    workflow: i.workflow,
    state: i.state,
    rev: i.rev,
    createdAt: i.createdAt,
    endedAt: i.state === "running" ? null : i.endedAt,
    text: encodeInstance(i),
  };
}

function scheduleRow(s: Schedule): ScheduleRow {
  return { name: s.name, rev: s.rev, nextFireAt: s.nextFireAt, text: encodeSchedule(s) };
}

function fireStartRow(start: FireStart) {
  return "instance" in start ? { instance: instanceRow(start.instance), jobs: start.jobs } : { jobs: [start.job] };
}
