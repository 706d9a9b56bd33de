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

/** A copy of plain data with its byte arrays as { $b64 } objects, for JSON.stringify without a replacer (as slow as a reviver). */
function withBytesEncoded(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(withBytesEncoded);
  if (value instanceof Uint8Array) return { [BYTES]: Buffer.from(value).toString("base64") };
  const out: Record<string, unknown> = {};
  for (const key in value) out[key] = withBytesEncoded((value as Record<string, unknown>)[key]);
  return out;
}

function stringify(value: unknown): string {
  return JSON.stringify(withBytesEncoded(value));
}

/**
 * The byte arrays of parsed JSON restored in place. Not a JSON.parse reviver: V8 calls a
 * reviver for every value of the text, which made decoding instances the largest single
 * cost of a workflow step (docs/benchmarks.md); this walk is plain JavaScript, and text
 * without byte arrays is not walked at all.
 */
function restoreBytes(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = restoreBytes(value[i]);
    return value;
  }
  const record = value as Record<string, unknown>;
  const bytes = record[BYTES];
  if (typeof bytes === "string") return new Uint8Array(Buffer.from(bytes, "base64"));
  for (const key in record) record[key] = restoreBytes(record[key]);
  return record;
}

function parse<T>(text: string): T {
  const value: unknown = JSON.parse(text);
  return (text.includes(BYTES) ? restoreBytes(value) : value) as T;
}

export const encodeInstance = (instance: WorkflowInstance): string => stringify(instance);
export const decodeInstance = (text: string): WorkflowInstance => parse<WorkflowInstance>(text);
export const encodeDefinition = (def: WorkflowDef): string => stringify(def);
export const decodeDefinition = (text: string): WorkflowDef => parse<WorkflowDef>(text);
export const encodeJobContext = (ctx: WorkflowJobContext): string => stringify(ctx);
export const decodeJobContext = (text: string): WorkflowJobContext => parse<WorkflowJobContext>(text);
export const encodeSchedule = (schedule: Schedule): string => stringify(schedule);
export const decodeSchedule = (text: string): Schedule => parse<Schedule>(text);
