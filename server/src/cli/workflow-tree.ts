/**
 * `runlater workflow show`: an instance as a tree of its jobs, from the jobs nothing
 * upstream feeds down along the edges of its workflow, each with its state, run count and
 * last run's outcome. A job fed by several upstream jobs appears under the first; later
 * it is a one-line reference (a graph is not a tree, and cycles are allowed).
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  type Instance,
  type InstanceJob,
  InstanceJobState,
  InstanceState,
  RunOutcome,
  type Workflow,
} from "@runlater/sdk/gen/workflow_service_pb.js";
import { formatTime } from "./output.js";

export function instanceStateName(state: InstanceState): string {
  return (InstanceState[state] ?? String(state)).toLowerCase();
}

function jobStateName(state: InstanceJobState): string {
  return InstanceJobState[state] ?? String(state);
}

function outcomeName(outcome: RunOutcome): string {
  return (RunOutcome[outcome] ?? String(outcome)).toLowerCase();
}

/** The header lines and the tree. `workflow` is the version the instance runs. */
export function instanceTree(instance: Instance, workflow: Workflow): string {
  const ended = instance.endedAt ? `, ended ${formatTime(instance.endedAt)}` : "";
  const open = instance.keepOpen ? ", kept open" : "";
  const head =
    `instance ${instance.instanceId}: workflow ${instance.workflow} v${instance.version}, ` +
    `${instanceStateName(instance.state)}${open} (started ${formatTime(instance.createdAt)}${ended})\n`;
  const jobs = new Map(instance.jobs.map((j) => [j.name, j]));
  const downstream = new Map<string, string[]>();
  const fedByJobs = new Set<string>();
  for (const job of workflow.jobs) {
    for (const input of job.inputs) {
      if (input.source.case !== "job") continue;
      if (input.source.value !== job.name) fedByJobs.add(job.name);
      downstream.set(input.source.value, [...(downstream.get(input.source.value) ?? []), job.name]);
    }
  }
  const order = workflow.jobs.map((j) => j.name);
  // Roots: jobs no other job feeds; then anything left unreached (a cycle with no way in).
  const roots = order.filter((name) => !fedByJobs.has(name));
  const shown = new Set<string>();
  const lines: string[] = [];
  const walk = (name: string, prefix: string, last: boolean, top: boolean) => {
    const branch = top ? "" : last ? "└── " : "├── ";
    if (shown.has(name)) {
      lines.push(`${prefix}${branch}${name} (shown above)`);
      return;
    }
    shown.add(name);
    lines.push(`${prefix}${branch}${describe(name, jobs.get(name))}`);
    const children = downstream.get(name) ?? [];
    const next = top ? prefix : `${prefix}${last ? "    " : "│   "}`;
    for (const [i, child] of children.entries()) walk(child, next, i === children.length - 1, false);
  };
  for (const root of roots) walk(root, "", true, true);
  for (const name of order) if (!shown.has(name)) walk(name, "", true, true);
  return `${head}${lines.map((l) => `${l}\n`).join("")}`;
}

function describe(name: string, job: InstanceJob | undefined): string {
  if (!job) return `${name}  (not in this instance)`;
  const last = job.runs[job.runs.length - 1];
  const parts = [name, jobStateName(job.state), `runs ${job.runCount}`];
  if (last) {
    const status = last.customStatus ? ` "${last.customStatus.slice(0, 60)}"` : "";
    const when = last.endedAt ? ` at ${timestampDate(last.endedAt).toISOString()}` : "";
    parts.push(`last: #${last.run} ${outcomeName(last.outcome)}${status}${when} (job ${last.jobId})`);
  }
  if (job.pendingEvents.length > 0) parts.push(`${job.pendingEvents.length} event(s) waiting`);
  if (job.droppedEvents > 0) parts.push(`${job.droppedEvents} dropped`);
  return parts.join("  ");
}
