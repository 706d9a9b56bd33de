/**
 * The state machine of workflow instances (docs/workflows.md): the only place that
 * decides what a run's outcome, an external event, a re-run, disable, enable, cancel or
 * close does to an instance. Each function is pure: it takes the instance and returns the
 * next one (never changing its argument) with the queue jobs to enqueue and to cancel.
 * Stores apply that result atomically with the ACK that caused it.
 *
 * Copy on write: the next instance shares every job the transition did not change with
 * the one it came from (a step of a diamond changes two or three of its five), so a step
 * copies only what it changes. Nothing here writes to a job without taking it with own()
 * first.
 */
import { limits } from "./limits.js";
import { clonePlain } from "./plain-data.js";
import { downstreamOf, inputKey, seeded, type WorkflowDef, type WorkflowJobDef } from "./workflow-definition.js";

export interface WorkflowEvent {
  /** Unique in its instance. */
  id: string;
  postedAt: number;
  /** The run whose success posted it; absent for an external event. */
  from?: { job: string; run: number };
  customStatus: string;
  result: Uint8Array;
}

export type RunOutcome = "queued" | "succeeded" | "failed" | "abandoned";

export interface JobRun {
  run: number;
  queueJobId: string;
  /** The events the run consumed, one per input, by input key. */
  triggeredBy: Array<{ input: string; event: WorkflowEvent }>;
  outcome: RunOutcome;
  customStatus: string;
  result: Uint8Array;
  queuedAt: number;
  endedAt: number;
  /**
   * Its triggering events' results were dropped to keep the instance within
   * limits.workflowInstanceBytesMax: it can no longer be re-run.
   */
  trimmed?: boolean;
}

/** idle: WAITING (or waiting to be consumed); queued: its queue job exists (RUNNABLE or RUNNING). */
export type StoredJobState = "idle" | "queued" | "disabled";

export interface InstanceJob {
  state: StoredJobState;
  /** Events waiting in each input (by input key), oldest first. */
  inputs: Record<string, WorkflowEvent[]>;
  /** The latest runs, oldest first (at most limits.workflowRunsKept). */
  runs: JobRun[];
  runCount: number;
  /** Events dropped because an input held limits.workflowEventsPerInputMax already. */
  droppedEvents: number;
}

export type InstanceState = "running" | "succeeded" | "failed" | "aborted" | "cancelled";

export interface WorkflowInstance {
  id: string;
  workflow: string;
  version: number;
  state: InstanceState;
  /** An instance started open does not end when quiescent; it ends when closed. */
  keepOpen: boolean;
  /** Changes with every transition: stores apply one only over the revision it was decided on. */
  rev: number;
  createdAt: number;
  endedAt: number;
  failedRuns: number;
  eventSeq: number;
  jobs: Record<string, InstanceJob>;
}

/** A queue job to enqueue for a run; `id` comes from the engine (it knows partitions). */
export interface RunPlan {
  id: string;
  job: string;
  run: number;
  queue: string;
  body: Uint8Array;
  priority: number;
  attemptsAllowed: number;
}

export interface Transition {
  instance: WorkflowInstance;
  enqueue: RunPlan[];
  /** Queue jobs of runs that will not happen now (abort, cancel, disable): delete them if still pending. */
  cancel: string[];
  /** False when nothing changed (a repeated or stale outcome): nothing to write. */
  changed: boolean;
}

/** A transition being decided: the jobs it has copied for writing (own()). */
interface Draft extends Transition {
  owned: Set<string>;
}

/** Gives the id of a new queue job on `queue` (the engine picks the partition). */
export type AssignId = (queue: string) => string;

export interface Output {
  customStatus: string;
  result: Uint8Array;
}

export function startInstance(
  def: WorkflowDef,
  o: { id: string; now: number; keepOpen: boolean; external: Array<{ input: string; output: Output }> },
  assignId: AssignId,
): Transition {
  const jobs: Record<string, InstanceJob> = {};
  for (const job of def.jobs) {
    jobs[job.name] = {
      state: "idle",
      inputs: Object.fromEntries(job.inputs.map((input) => [inputKey(input), []])),
      runs: [],
      runCount: 0,
      droppedEvents: 0,
    };
  }
  const instance: WorkflowInstance = {
    id: o.id,
    workflow: def.name,
    version: def.version,
    state: "running",
    keepOpen: o.keepOpen,
    rev: 1,
    createdAt: o.now,
    endedAt: 0,
    failedRuns: 0,
    eventSeq: 0,
    jobs,
  };
  const t = draft(instance);
  for (const job of def.jobs) {
    for (const input of job.inputs.filter(seeded)) {
      post(t, job.name, inputKey(input), newEvent(t.instance, o.now, { customStatus: "", result: new Uint8Array() }));
    }
  }
  for (const e of o.external) postExternalTo(def, t, e.input, e.output, o.now);
  return finish(def, t, o.now, assignId, true);
}

/** A run's queue job ended: succeeded (its events go downstream unless `postEvents` is false) or failed for good. */
export function runEnded(
  def: WorkflowDef,
  instance: WorkflowInstance,
  o: { job: string; run: number; outcome: "succeeded" | "failed"; output: Output; postEvents: boolean; now: number },
  assignId: AssignId,
): Transition {
  const current = instance.jobs[o.job]?.runs.find((r) => r.run === o.run);
  if (current?.outcome !== "queued") return unchanged(instance);
  const t = draft(instance);
  const job = own(t, o.job);
  const run = job.runs.find((r) => r.run === o.run)!;
  run.outcome = o.outcome;
  run.customStatus = o.output.customStatus;
  run.result = o.output.result;
  run.endedAt = o.now;
  if (job.state === "queued") job.state = "idle";
  if (t.instance.state !== "running") return finish(def, t, o.now, assignId, false);
  if (o.outcome === "failed") {
    t.instance.failedRuns++;
    if (jobDef(def, o.job).onFailure === "abort") {
      end(t, "aborted", o.now);
      return finish(def, t, o.now, assignId, false);
    }
  } else if (o.postEvents) {
    const event = newEvent(t.instance, o.now, o.output, { job: o.job, run: o.run });
    for (const downstream of downstreamOf(def, o.job)) post(t, downstream.name, `job:${o.job}`, event);
  }
  return finish(def, t, o.now, assignId, true);
}

export function postExternal(
  def: WorkflowDef,
  instance: WorkflowInstance,
  o: { input: string; output: Output; now: number },
  assignId: AssignId,
): Transition {
  const t = draft(instance);
  postExternalTo(def, t, o.input, o.output, o.now);
  return finish(def, t, o.now, assignId, true);
}

/** Posts a run's triggering events again to its job's inputs (Pinball's re-run). */
export function rerun(
  def: WorkflowDef,
  instance: WorkflowInstance,
  o: { job: string; run: number; now: number },
  assignId: AssignId,
): Transition {
  const t = draft(instance);
  const run = t.instance.jobs[o.job]?.runs.find((r) => r.run === o.run);
  if (!run)
    throw new WorkflowRuleError(
      `job ${o.job} of instance ${instance.id} has no run ${o.run} (kept: the latest ${limits.workflowRunsKept}, within the instance's size bound)`,
    );
  if (run.trimmed)
    throw new WorkflowRuleError(
      `run ${o.run} of job ${o.job} of instance ${instance.id} no longer holds its triggering events' results (the history was trimmed to the instance's size bound, ${limits.workflowInstanceBytesMax} bytes): it cannot be re-run`,
    );
  for (const { input, event } of run.triggeredBy) post(t, o.job, input, event);
  // A job without inputs has no events to post again: re-running it is one more run.
  if (run.triggeredBy.length === 0) {
    const job = t.instance.jobs[o.job]!;
    if (job.state === "idle") queueRun(t, jobDef(def, o.job), [], o.now, assignId);
  }
  return finish(def, t, o.now, assignId, true);
}

/**
 * A disabled job never runs; events still gather in its inputs. Its current run is
 * abandoned: its queue job is cancelled if still pending, and if a worker has it, its
 * outcome is ignored (it posts nothing).
 */
export function disableJob(def: WorkflowDef, instance: WorkflowInstance, o: { job: string; now: number }): Transition {
  jobDef(def, o.job);
  if (instance.jobs[o.job]!.state === "disabled") return unchanged(instance);
  const t = draft(instance);
  const job = own(t, o.job);
  abandonRuns(t, job, o.now);
  job.state = "disabled";
  return finish(def, t, o.now, () => "", false);
}

export function enableJob(
  def: WorkflowDef,
  instance: WorkflowInstance,
  o: { job: string; now: number },
  assignId: AssignId,
): Transition {
  jobDef(def, o.job);
  if (instance.jobs[o.job]!.state !== "disabled") return unchanged(instance);
  const t = draft(instance);
  own(t, o.job).state = "idle";
  return finish(def, t, o.now, assignId, true);
}

export function cancelInstance(instance: WorkflowInstance, o: { now: number }): Transition {
  if (instance.state !== "running") return unchanged(instance);
  const t = draft(instance);
  end(t, "cancelled", o.now);
  return t;
}

/** An open instance may end now: it ends once quiescent (at once, if it is). */
export function closeInstance(def: WorkflowDef, instance: WorkflowInstance, o: { now: number }): Transition {
  if (!instance.keepOpen || instance.state !== "running") return unchanged(instance);
  const t = draft(instance);
  t.instance.keepOpen = false;
  return finish(def, t, o.now, () => "", false);
}

/** A request that the instance's state does not allow (e.g. re-running a run it no longer keeps). */
export class WorkflowRuleError extends Error {}

// ---- internals

/** The next instance: its own fields and map of jobs, the jobs themselves shared until own() copies one. */
function draft(instance: WorkflowInstance): Draft {
  const next = { ...instance, jobs: { ...instance.jobs } };
  return { instance: next, enqueue: [], cancel: [], changed: true, owned: new Set() };
}

/** Job `name` of the draft, copied the first time it is taken for writing. */
function own(t: Draft, name: string): InstanceJob {
  const jobs = t.instance.jobs;
  if (!t.owned.has(name)) {
    jobs[name] = clonePlain(jobs[name]!);
    t.owned.add(name);
  }
  return jobs[name]!;
}

function unchanged(instance: WorkflowInstance): Transition {
  return { instance, enqueue: [], cancel: [], changed: false };
}

function jobDef(def: WorkflowDef, name: string): WorkflowJobDef {
  const job = def.jobs.find((j) => j.name === name);
  if (!job) throw new WorkflowRuleError(`workflow ${def.name} v${def.version} has no job "${name}"`);
  return job;
}

function newEvent(
  instance: WorkflowInstance,
  now: number,
  output: Output,
  from?: WorkflowEvent["from"],
): WorkflowEvent {
  instance.eventSeq++;
  return {
    id: `${instance.id}:${instance.eventSeq}`,
    postedAt: now,
    ...(from ? { from } : {}),
    customStatus: output.customStatus,
    result: output.result,
  };
}

function postExternalTo(def: WorkflowDef, t: Draft, input: string, output: Output, now: number): void {
  const instance = t.instance;
  const fed = def.jobs.filter((j) => j.inputs.some((i) => "external" in i && i.external === input));
  if (fed.length === 0)
    throw new WorkflowRuleError(`workflow ${def.name} v${def.version} has no external input "${input}"`);
  const event = newEvent(instance, now, output);
  for (const job of fed) post(t, job.name, `external:${input}`, event);
}

/** Adds an event to an input; an input full of unconsumed events drops its oldest. */
function post(t: Draft, job: string, input: string, event: WorkflowEvent): void {
  const target = own(t, job);
  const events = target.inputs[input]!;
  events.push(event);
  if (events.length > limits.workflowEventsPerInputMax) {
    events.shift();
    target.droppedEvents++;
  }
}

/**
 * Queues every job that can run (in definition order, each at most once: a job runs one
 * run at a time), then ends the instance if it is quiescent and not kept open.
 */
function finish(def: WorkflowDef, t: Draft, now: number, assignId: AssignId, canRun: boolean): Transition {
  if (canRun && t.instance.state === "running") {
    for (const job of def.jobs) {
      const seen = t.instance.jobs[job.name]!;
      if (seen.state !== "idle" || seen.runCount >= limits.workflowRunsPerJobMax) continue;
      const keys = job.inputs.map(inputKey);
      // A job without inputs runs once, at start.
      if (keys.length === 0 ? seen.runCount > 0 : keys.some((k) => seen.inputs[k]!.length === 0)) continue;
      const state = own(t, job.name);
      const consumed = keys.map((input) => ({ input, event: state.inputs[input]!.shift()! }));
      queueRun(t, job, consumed, now, assignId);
    }
  }
  const quiescent = Object.values(t.instance.jobs).every((j) => j.state !== "queued");
  if (t.instance.state === "running" && quiescent && !t.instance.keepOpen) {
    end(t, t.instance.failedRuns > 0 ? "failed" : "succeeded", now);
  }
  keepWithinSize(t);
  t.instance.rev++;
  return t;
}

/**
 * Trims the history of an instance grown past limits.workflowInstanceBytesMax: the results
 * of the oldest ended runs' triggering events first (the runs stay, marked trimmed), then
 * the oldest ended runs themselves. Each job's newest ended run stays whole (it can be
 * re-run), and what runs and waits (queued runs, events in inputs) is never touched: those
 * are bounded by the per-input and per-job limits alone.
 */
function keepWithinSize(t: Draft): void {
  let bytes = measure(t.instance);
  if (bytes > limits.workflowInstanceBytesMax) {
    trim(t, bytes);
    bytes = measure(t.instance); // the trim's own count is close, not exact
  }
  measured.set(t.instance, bytes);
}

/** Trims `t`'s history (keepWithinSize), counting down from its size `bytes`. */
function trim(t: Draft, bytes: number): void {
  const older = Object.entries(t.instance.jobs)
    .flatMap(([job, j]) => {
      const ended = j.runs.filter((r) => r.outcome !== "queued");
      return ended.slice(0, -1).map((r) => ({ job, run: r.run, at: r.endedAt, trimmed: r.trimmed === true }));
    })
    .sort((a, b) => a.at - b.at);
  for (const { job, run, trimmed } of older) {
    if (bytes <= limits.workflowInstanceBytesMax) return;
    if (trimmed) continue;
    const r = own(t, job).runs.find((x) => x.run === run)!;
    for (const { event } of r.triggeredBy) {
      bytes -= base64Bytes(event.result.length);
      event.result = new Uint8Array();
    }
    r.trimmed = true;
  }
  for (const { job, run } of older) {
    if (bytes <= limits.workflowInstanceBytesMax) return;
    const runs = own(t, job).runs;
    const at = runs.findIndex((x) => x.run === run);
    bytes -= runBytes(runs[at]!);
    runs.splice(at, 1);
  }
}

/**
 * Sizes measured by the transitions that made their instances: the engine's cache weighs
 * the instance a step just decided (engine/instance-steps.ts) without walking it again.
 * An instance is not written to once its transition has returned it.
 */
const measured = new WeakMap<WorkflowInstance, number>();

/** About what an instance takes as workflow-codec.ts encodes it (JSON, byte arrays as base64). */
export function instanceBytes(instance: WorkflowInstance): number {
  return measured.get(instance) ?? measure(instance);
}

function measure(instance: WorkflowInstance): number {
  let bytes = 200 + instance.id.length + instance.workflow.length;
  for (const name in instance.jobs) {
    const job = instance.jobs[name]!;
    bytes += 90 + name.length;
    for (const input in job.inputs) {
      bytes += 6 + input.length;
      for (const event of job.inputs[input]!) bytes += eventBytes(event);
    }
    for (const run of job.runs) bytes += runBytes(run);
  }
  return bytes;
}

function runBytes(run: JobRun): number {
  let bytes = 180 + run.queueJobId.length + run.customStatus.length + base64Bytes(run.result.length);
  for (const { input, event } of run.triggeredBy) bytes += 30 + input.length + eventBytes(event);
  return bytes;
}

function eventBytes(event: WorkflowEvent): number {
  return 105 + event.id.length + event.customStatus.length + base64Bytes(event.result.length);
}

function base64Bytes(n: number): number {
  return Math.ceil(n / 3) * 4;
}

function queueRun(
  t: Draft,
  job: WorkflowJobDef,
  triggeredBy: JobRun["triggeredBy"],
  now: number,
  assignId: AssignId,
): void {
  const state = own(t, job.name);
  state.runCount++;
  const id = assignId(job.queue);
  state.runs.push({
    run: state.runCount,
    queueJobId: id,
    triggeredBy,
    outcome: "queued",
    customStatus: "",
    result: new Uint8Array(),
    queuedAt: now,
    endedAt: 0,
  });
  if (state.runs.length > limits.workflowRunsKept) state.runs.shift();
  state.state = "queued";
  t.enqueue.push({
    id,
    job: job.name,
    run: state.runCount,
    queue: job.queue,
    body: job.body,
    priority: job.priority,
    attemptsAllowed: job.attemptsAllowed,
  });
}

/** Ends the instance: its runs still queued are abandoned. */
function end(t: Draft, state: Exclude<InstanceState, "running">, now: number): void {
  t.instance.state = state;
  t.instance.endedAt = now;
  for (const [name, seen] of Object.entries(t.instance.jobs)) {
    if (seen.state !== "queued" && !seen.runs.some((r) => r.outcome === "queued")) continue;
    const job = own(t, name);
    abandonRuns(t, job, now);
    if (job.state === "queued") job.state = "idle";
  }
}

/**
 * Runs still queued will not count: their queue jobs are cancelled if pending, their
 * outcomes ignored. `job` must be the draft's own (own()).
 */
function abandonRuns(t: Draft, job: InstanceJob, now: number): void {
  for (const run of job.runs) {
    if (run.outcome !== "queued") continue;
    run.outcome = "abandoned";
    run.endedAt = now;
    t.cancel.push(run.queueJobId);
  }
}
