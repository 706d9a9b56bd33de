/**
 * Workflow definition files for `runlater workflow apply FILE.yaml` (docs/cli.md#workflow-apply-file):
 * YAML (or JSON, which is YAML) read into a runlater.v1.Workflow. This checks the file's
 * shape and names the place of a mistake (`jobs[1].inputs[0]`); the server checks the rest
 * (names, queues, bounds) and names the field the same way.
 *
 *   name: etl
 *   jobs:
 *     - name: extract
 *       queue: extract
 *       inputs:
 *         - external: files_ready     # posted from outside (workflow start --event, PostEvent)
 *     - name: load
 *       queue: load
 *       inputs: [extract]             # the successful runs of job extract
 *       on_failure: continue          # or abort (the default)
 *       body: "text"                  # or body_base64: …; the body of each queue job
 *       priority: 2                   # default 1
 *       attempts: 5                   # default: the queue's
 */
import { create } from "@bufbuild/protobuf";
import {
  FailurePolicy,
  type Workflow,
  type WorkflowInput,
  WorkflowInputSchema,
  WorkflowSchema,
} from "@runlater/sdk/gen/workflow_service_pb.js";
import { parse } from "yaml";

/** A mistake in a definition file, naming where it is. */
export class WorkflowFileError extends Error {}

type Obj = Record<string, unknown>;

const JOB_KEYS = ["name", "queue", "inputs", "on_failure", "body", "body_base64", "priority", "attempts"];

export function parseWorkflowFile(text: string): Workflow {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new WorkflowFileError(`not YAML: ${(err as Error).message}`);
  }
  const root = object(doc, "the file");
  allowOnly(root, ["name", "jobs"], "the file");
  const jobs = root.jobs;
  if (!Array.isArray(jobs) || jobs.length === 0) throw new WorkflowFileError("jobs: give a list of at least one job");
  return create(WorkflowSchema, {
    name: text0(root.name, "name"),
    jobs: jobs.map((j, i) => {
      const at = `jobs[${i}]`;
      const job = object(j, at);
      allowOnly(job, JOB_KEYS, at);
      if (job.body !== undefined && job.body_base64 !== undefined)
        throw new WorkflowFileError(`${at}: give body or body_base64, not both`);
      const inputs = job.inputs ?? [];
      if (!Array.isArray(inputs)) throw new WorkflowFileError(`${at}.inputs: give a list`);
      return {
        name: text0(job.name, `${at}.name`),
        queue: text0(job.queue, `${at}.queue`),
        inputs: inputs.map((input, k) => inputOf(input, `${at}.inputs[${k}]`)),
        onFailure: failurePolicy(job.on_failure, `${at}.on_failure`),
        body:
          job.body_base64 !== undefined
            ? new Uint8Array(Buffer.from(text0(job.body_base64, `${at}.body_base64`), "base64"))
            : new TextEncoder().encode(job.body === undefined ? "" : text0(job.body, `${at}.body`)),
        priority: count(job.priority, `${at}.priority`),
        attemptsAllowed: count(job.attempts, `${at}.attempts`),
      };
    }),
  });
}

/** `extract`, `{job: extract, seed: true}` or `{external: files_ready}`. */
function inputOf(value: unknown, at: string): WorkflowInput {
  if (typeof value === "string") return create(WorkflowInputSchema, { source: { case: "job", value } });
  const input = object(value, at);
  allowOnly(input, ["job", "seed", "external"], at);
  if ((input.job === undefined) === (input.external === undefined))
    throw new WorkflowFileError(`${at}: give a job name, {job: NAME}, or {external: NAME}`);
  if (input.external !== undefined) {
    if (input.seed !== undefined) throw new WorkflowFileError(`${at}: seed is for job inputs only`);
    return create(WorkflowInputSchema, {
      source: { case: "external", value: text0(input.external, `${at}.external`) },
    });
  }
  if (input.seed !== undefined && typeof input.seed !== "boolean")
    throw new WorkflowFileError(`${at}.seed: give true or false`);
  return create(WorkflowInputSchema, {
    source: { case: "job", value: text0(input.job, `${at}.job`) },
    seed: input.seed === true,
  });
}

function failurePolicy(value: unknown, at: string): FailurePolicy {
  if (value === undefined || value === "abort") return FailurePolicy.ABORT;
  if (value === "continue") return FailurePolicy.CONTINUE;
  throw new WorkflowFileError(`${at}: give abort or continue`);
}

function object(value: unknown, at: string): Obj {
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new WorkflowFileError(`${at}: expected a mapping (key: value lines)`);
  return value as Obj;
}

function allowOnly(o: Obj, keys: string[], at: string): void {
  const unknown = Object.keys(o).filter((k) => !keys.includes(k));
  if (unknown.length > 0)
    throw new WorkflowFileError(
      `${at}: unknown key ${unknown.map((k) => `"${k}"`).join(", ")} (known: ${keys.join(", ")})`,
    );
}

function text0(value: unknown, at: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  throw new WorkflowFileError(`${at}: expected text`);
}

function count(value: unknown, at: string): number {
  if (value === undefined) return 0;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > 0xffff_ffff)
    throw new WorkflowFileError(`${at}: expected a whole number`);
  return value;
}
