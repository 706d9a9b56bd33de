/**
 * How workflow state (and schedules) travels through stores that keep text (Redis, MySQL, SQLite): JSON,
 * with byte arrays as base64. A store persists these strings as they are; only the domain
 * reads them.
 */
import type { Schedule } from "./schedule.js";
import type { WorkflowDef } from "./workflow-definition.js";
import type { WorkflowEvent, WorkflowInstance } from "./workflow-transitions.js";

/** What a queue job of a workflow run carries (JobRecord.workflow, as encodeJobContext makes it). */
export interface WorkflowJobContext {
  workflow: string;
  version: number;
  instanceId: string;
  job: string;
  run: number;
  triggeredBy: Array<{ input: string; event: WorkflowEvent }>;
}

const BYTES = "$b64";

function replacer(_key: string, value: unknown): unknown {
  return value instanceof Uint8Array ? { [BYTES]: Buffer.from(value).toString("base64") } : value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === "object" && BYTES in value) {
    return new Uint8Array(Buffer.from((value as Record<string, string>)[BYTES]!, "base64"));
  }
  return value;
}

export const encodeInstance = (instance: WorkflowInstance): string => JSON.stringify(instance, replacer);
export const decodeInstance = (text: string): WorkflowInstance => JSON.parse(text, reviver) as WorkflowInstance;
export const encodeDefinition = (def: WorkflowDef): string => JSON.stringify(def, replacer);
export const decodeDefinition = (text: string): WorkflowDef => JSON.parse(text, reviver) as WorkflowDef;
export const encodeJobContext = (ctx: WorkflowJobContext): string => JSON.stringify(ctx, replacer);
export const decodeJobContext = (text: string): WorkflowJobContext => JSON.parse(text, reviver) as WorkflowJobContext;
export const encodeSchedule = (schedule: Schedule): string => JSON.stringify(schedule, replacer);
export const decodeSchedule = (text: string): Schedule => JSON.parse(text, reviver) as Schedule;
