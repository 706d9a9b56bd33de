/**
 * A workflow definition (docs/workflows.md): a named, versioned graph of jobs, each run as
 * an ordinary job of its queue, with inputs fed by upstream jobs or from outside. This
 * module validates a definition as a client sends it; workflow-transitions.ts runs it.
 */
import { invalidArgument } from "./errors.js";
import { limits } from "./limits.js";
import { validateQueueName } from "./queue-config.js";

/**
 * Where an input's events come from: the successful runs of an upstream job, or outside.
 * A `seed`ed job input holds one event when an instance starts: how a cycle gets going
 * (every input of every job on a cycle waits for the one before it otherwise).
 */
export type InputSource = { job: string; seed?: boolean } | { external: string };

export type FailurePolicy = "abort" | "continue";

export interface WorkflowJobDef {
  name: string;
  queue: string;
  inputs: InputSource[];
  /** What a failed run (its queue job's attempts used up) does to the instance. */
  onFailure: FailurePolicy;
  /** The body of every queue job this job enqueues. */
  body: Uint8Array;
  /** 0: the queue job gets priority 1. */
  priority: number;
  /** 0: the queue's default. */
  attemptsAllowed: number;
}

export interface WorkflowDef {
  name: string;
  /** 1 for the first definition; each apply that changes it adds one. */
  version: number;
  jobs: WorkflowJobDef[];
}

/** The key of an input in an instance's state: "job:<name>" or "external:<name>". */
export function inputKey(source: InputSource): string {
  return "job" in source ? `job:${source.job}` : `external:${source.external}`;
}

const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Throws invalid_argument unless `value` is a name workflows use (workflows, jobs, inputs, schedules). */
export function checkName(value: string, field: string, what: string): void {
  if (value.length === 0 || value.length > limits.workflowNameMaxLength || !NAME.test(value)) {
    throw invalidArgument(
      field,
      `${field} "${value.slice(0, 80)}" is not a valid ${what}: use 1 to ${limits.workflowNameMaxLength} letters, digits, _ . - (not starting with . or -)`,
    );
  }
}

/** Throws invalid_argument, naming the field, for anything a definition may not be. */
export function validateWorkflow(def: Omit<WorkflowDef, "version">): void {
  checkName(def.name, "workflow.name", "workflow name");
  if (def.jobs.length === 0) throw invalidArgument("workflow.jobs", "a workflow needs at least one job");
  if (def.jobs.length > limits.workflowJobsMax) {
    throw invalidArgument(
      "workflow.jobs",
      `a workflow has at most ${limits.workflowJobsMax} jobs; this one has ${def.jobs.length}`,
    );
  }
  const names = new Set<string>();
  for (const [i, job] of def.jobs.entries()) {
    checkName(job.name, `workflow.jobs[${i}].name`, "job name");
    if (names.has(job.name)) throw invalidArgument(`workflow.jobs[${i}].name`, `job name "${job.name}" is used twice`);
    names.add(job.name);
    validateQueueName(job.queue, `workflow.jobs[${i}].queue`);
    if (job.body.length > limits.maxBodyBytesMax) {
      throw invalidArgument(
        `workflow.jobs[${i}].body`,
        `body is ${job.body.length} bytes; at most ${limits.maxBodyBytesMax}`,
      );
    }
    if (job.inputs.length > limits.workflowInputsMax) {
      throw invalidArgument(`workflow.jobs[${i}].inputs`, `a job has at most ${limits.workflowInputsMax} inputs`);
    }
    if (job.attemptsAllowed < 0 || job.attemptsAllowed > limits.attemptsMax) {
      throw invalidArgument(
        `workflow.jobs[${i}].attempts_allowed`,
        `attempts_allowed must be 0 (the queue's default) to ${limits.attemptsMax}`,
      );
    }
  }
  for (const [i, job] of def.jobs.entries()) {
    const seen = new Set<string>();
    for (const [k, input] of job.inputs.entries()) {
      const field = `workflow.jobs[${i}].inputs[${k}]`;
      if ("job" in input) {
        if (!names.has(input.job))
          throw invalidArgument(field, `input names job "${input.job}", which this workflow does not have`);
      } else {
        checkName(input.external, field, "external input name");
      }
      const key = inputKey(input);
      if (seen.has(key)) throw invalidArgument(field, `input ${key} is given twice`);
      seen.add(key);
    }
  }
}

export function seeded(input: InputSource): boolean {
  return "job" in input && input.seed === true;
}

/** The jobs that take events from `job`'s successful runs (its downstream), in definition order. */
export function downstreamOf(def: WorkflowDef, job: string): WorkflowJobDef[] {
  return def.jobs.filter((j) => j.inputs.some((input) => "job" in input && input.job === job));
}

/** The external inputs of the workflow, by name: which jobs each one feeds. */
export function externalInputs(def: WorkflowDef): Map<string, WorkflowJobDef[]> {
  const inputs = new Map<string, WorkflowJobDef[]>();
  for (const job of def.jobs) {
    for (const input of job.inputs) {
      if (!("external" in input)) continue;
      inputs.set(input.external, [...(inputs.get(input.external) ?? []), job]);
    }
  }
  return inputs;
}

/** Whether two definitions say the same (apply makes a new version only when they do not). */
export function sameDefinition(a: Omit<WorkflowDef, "version">, b: Omit<WorkflowDef, "version">): boolean {
  if (a.name !== b.name || a.jobs.length !== b.jobs.length) return false;
  return a.jobs.every((x, i) => {
    const y = b.jobs[i]!;
    return (
      x.name === y.name &&
      x.queue === y.queue &&
      x.onFailure === y.onFailure &&
      x.priority === y.priority &&
      x.attemptsAllowed === y.attemptsAllowed &&
      Buffer.compare(Buffer.from(x.body), Buffer.from(y.body)) === 0 &&
      x.inputs.length === y.inputs.length &&
      x.inputs.every((input, k) => {
        const other = y.inputs[k]!;
        return inputKey(input) === inputKey(other) && seeded(input) === seeded(other);
      })
    );
  });
}
