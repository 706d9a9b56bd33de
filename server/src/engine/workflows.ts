/**
 * Workflows on the engine (docs/workflows.md): definitions, instances, and the step that
 * applies a run's outcome. Every change to an instance is decided by
 * domain/workflow-transitions.ts on the instance as read, and applied by the store only
 * over that revision (Store.workflows.instanceApply), atomically with the queue jobs it
 * enqueues and cancels and, for a run's outcome, with the ACK of the run's queue job. A
 * conflict (a sibling run's outcome applied first) reads and decides again.
 */
import { randomUUID } from "node:crypto";
import type { Clock } from "../domain/clock.js";
import { invalidArgument, RunlaterError } from "../domain/errors.js";
import { newJobId, parseJobId } from "../domain/job-id.js";
import type { NewJob } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import { LruTable } from "../domain/lru-table.js";
import { storedOrderingKey } from "../domain/ordering.js";
import { decodeJobContext, encodeJobContext } from "../domain/workflow-codec.js";
import { sameDefinition, validateWorkflow, type WorkflowDef } from "../domain/workflow-definition.js";
import { type QueueJobSeen, queuedRunJobs, queuedRunsEnded } from "../domain/workflow-reconcile.js";
import {
  type AssignId,
  cancelInstance,
  closeInstance,
  disableJob,
  enableJob,
  type InstanceState,
  type Output,
  postExternal,
  type RunPlan,
  rerun,
  runEnded,
  startInstance,
  type Transition,
  type WorkflowInstance,
  WorkflowRuleError,
} from "../domain/workflow-transitions.js";
import type {
  AckResultRecord,
  OutcomeResult,
  Store,
  StoredWorkflow,
  WorkflowAck,
  WorkflowStore,
} from "../store/store.js";
import type { Dispatch } from "./dispatch.js";
import { announceInserted } from "./due-announcements.js";
import { InstanceSteps } from "./instance-steps.js";
import type { PartitionPicker } from "./partition-picker.js";
import type { QueueCache } from "./queue-cache.js";

/** How often a change is decided again after losing to a concurrent one before giving up. */
const CONFLICT_RETRIES = 50;
/**
 * Workflow versions kept decoded in memory, the least recently used dropped first, and
 * their bodies' bytes at most (a definition may carry 100 bodies). A version never changes
 * once stored, so a kept one is never stale.
 */
const DEFINITIONS_CACHED_MAX = 256;
const DEFINITIONS_CACHED_BYTES_MAX = 64 * 1024 * 1024;
/**
 * Workflow runs handed out by this process whose ACK has not come yet, kept with their
 * context, the oldest dropped first: an ACK of one skips the plain ACK step. A run not
 * kept (handed out elsewhere, before a restart, or dropped) takes that step, as before.
 */
export const RUNS_HANDED_OUT_MAX = 20_000;
/** ...and their contexts' characters at most (a context carries its triggering events' results). */
export const RUNS_HANDED_OUT_CHARS_MAX = 64 * 1024 * 1024;

export interface WorkflowsOptions {
  store: Store;
  clock: Clock;
  broker: Dispatch;
  queues: QueueCache;
  partitions: PartitionPicker;
}

/** What a worker reported for a workflow job: its ACK as the store applies it, and its output. */
export interface RunReport {
  ack: WorkflowAck;
  output: Output;
  postEvents: boolean;
}

export class Workflows {
  /** This process's changes to each instance, in turn, and the instances as they left them. */
  private readonly steps = new InstanceSteps();
  private readonly definitions = new LruTable<StoredWorkflow>(DEFINITIONS_CACHED_MAX, {
    weigh: ({ def }) => def.jobs.reduce((bytes, job) => bytes + 500 + job.body.length, 0),
    maxWeight: DEFINITIONS_CACHED_BYTES_MAX,
  });
  private readonly runsHandedOut = new LruTable<string>(RUNS_HANDED_OUT_MAX, {
    weigh: (context) => context.length,
    maxWeight: RUNS_HANDED_OUT_CHARS_MAX,
  });

  constructor(private readonly o: WorkflowsOptions) {}

  // ---- definitions

  async apply(input: Omit<WorkflowDef, "version">): Promise<{ stored: StoredWorkflow; created: boolean }> {
    const ws = this.store();
    validateWorkflow(input);
    for (const [i, job] of input.jobs.entries()) await this.o.queues.get(job.queue, `workflow.jobs[${i}].queue`);
    for (let tries = 0; tries < CONFLICT_RETRIES; tries++) {
      const latest = await ws.workflowGet({ name: input.name });
      if (latest && sameDefinition(latest.def, input)) return { stored: latest, created: false };
      const def: WorkflowDef = { ...input, version: (latest?.def.version ?? 0) + 1 };
      if (await ws.workflowInsert({ def, now: this.o.clock.now() })) {
        return { stored: { def, createdAt: this.o.clock.now() }, created: true };
      }
    }
    throw busy(`workflow ${input.name}`);
  }

  async get(name: string, version?: number): Promise<StoredWorkflow> {
    const key = version ? `${version}@${name}` : undefined;
    const kept = key === undefined ? undefined : this.definitions.get(key);
    if (kept) return kept;
    const found = await this.store().workflowGet({ name, version: version || undefined });
    if (!found) throw workflowNotFound(name, version);
    if (key !== undefined) this.definitions.set(key, found);
    return found;
  }

  list(): Promise<StoredWorkflow[]> {
    return this.store().workflowList();
  }

  // ---- instances

  async start(p: {
    workflow: string;
    events: Array<{ input: string; output: Output }>;
    keepOpen: boolean;
  }): Promise<WorkflowInstance> {
    const now = this.o.clock.now();
    const { instance, jobs } = await this.planStart({ ...p, id: newInstanceId(now), now });
    // Its first step (a first run's ACK) then decides on this copy, without reading it back.
    if (await this.store().instanceInsert({ instance, jobs, now })) this.steps.wrote(instance);
    announceInserted(this.o.broker, jobs);
    return instance;
  }

  /**
   * A new instance of the workflow's latest version and the queue jobs of its first runs,
   * not yet stored: start() inserts them, a schedule's fire inserts them with its own step.
   */
  async planStart(p: {
    workflow: string;
    events: Array<{ input: string; output: Output }>;
    keepOpen: boolean;
    id: string;
    now: number;
    /** Where its runs' queue jobs may go (a schedule's fire: beside the schedule); by default, the store's answer for `id`. */
    place?: (queues: string[]) => Promise<Allowed>;
  }): Promise<{ instance: WorkflowInstance; jobs: NewJob[] }> {
    const { def } = await this.get(p.workflow);
    for (const [i, e] of p.events.entries()) checkResult(e.output.result, `events[${i}].result`);
    await this.queuesOf(def);
    const allowed = await (p.place ?? ((queues) => this.place(p.id, queues)))(workflowQueues(def));
    const t = rule(() =>
      startInstance(
        def,
        { id: p.id, now: p.now, keepOpen: p.keepOpen, external: p.events },
        this.assignId(p.now, allowed),
      ),
    );
    return { instance: t.instance, jobs: await this.newJobs(def, t, p.now, allowed) };
  }

  async instance(id: string): Promise<WorkflowInstance> {
    const found = await this.store().instanceGet({ id });
    if (!found) throw instanceNotFound(id);
    return found;
  }

  listInstances(p: {
    workflow?: string;
    state?: InstanceState;
    limit: number;
    after?: { createdAt: number; id: string };
  }): Promise<WorkflowInstance[]> {
    return this.store().instanceList(p);
  }

  cancel(id: string): Promise<WorkflowInstance> {
    // It starts no run, so it needs none of the workflow's queues: an instance whose queue
    // was deleted can still be cancelled.
    return this.change(id, (_def, inst, now) => cancelInstance(inst, { now }), { startsRuns: false });
  }

  close(id: string): Promise<WorkflowInstance> {
    return this.change(id, (def, inst, now) => closeInstance(def, inst, { now }));
  }

  postEvent(id: string, input: string, output: Output): Promise<WorkflowInstance> {
    checkResult(output.result, "event.result");
    return this.change(id, (def, inst, now, assign) => postExternal(def, inst, { input, output, now }, assign));
  }

  rerun(id: string, job: string, run: number): Promise<WorkflowInstance> {
    return this.change(id, (def, inst, now, assign) => rerun(def, inst, { job, run, now }, assign));
  }

  disable(id: string, job: string): Promise<WorkflowInstance> {
    return this.change(id, (def, inst, now) => disableJob(def, inst, { job, now }));
  }

  enable(id: string, job: string): Promise<WorkflowInstance> {
    return this.change(id, (def, inst, now, assign) => enableJob(def, inst, { job, now }, assign));
  }

  // ---- the reconciler (docs/workflows.md#the-reconciler)

  /**
   * Ends, as failed, the instance's queued runs whose queue job failed outside the ACK path
   * (the claim-timeout sweep) or is gone. Idempotent: a run's outcome is taken once.
   * Returns whether the instance changed.
   */
  async reconcile(id: string): Promise<boolean> {
    const instance = await this.store().instanceGet({ id });
    if (!instance) return false;
    const seen = await this.seen(queuedRunJobs(instance));
    if (![...seen.values()].some((s) => s.state !== "live")) return false;
    try {
      const after = await this.change(id, (def, inst, now, assign) => queuedRunsEnded(def, inst, seen, now, assign));
      return after.rev !== instance.rev;
    } catch (err) {
      if (err instanceof RunlaterError && err.reason === "INSTANCE_NOT_FOUND") return false; // deleted meanwhile
      throw err;
    }
  }

  /** The queue jobs of queued runs as the reconciler sees them: failed, gone, or live. */
  async seen(ids: string[]): Promise<Map<string, QueueJobSeen>> {
    const seen = new Map<string, QueueJobSeen>();
    for (let at = 0; at < ids.length; at += limits.getJobsMax) {
      const chunk = ids.slice(at, at + limits.getJobsMax);
      const jobs = await this.o.store.jobGetMany({ ids: chunk, bodies: false });
      chunk.forEach((id, i) => {
        const job = jobs[i];
        seen.set(
          id,
          !job
            ? { state: "gone" }
            : job.state === "failed"
              ? { state: "failed", customStatus: job.customStatus }
              : { state: "live" },
        );
      });
    }
    return seen;
  }

  // ---- runs

  /** Jobs this process just handed out: the workflow runs among them are kept (RUNS_HANDED_OUT_MAX). */
  handedOut(jobs: ReadonlyArray<{ id: string; workflow?: string }>): void {
    for (const job of jobs) {
      if (job.workflow === undefined) continue;
      this.runsHandedOut.set(job.id, job.workflow);
    }
  }

  /** The stored context of a workflow run this process handed out, forgotten once asked (its ACK came). */
  runHandedOut(id: string): string | undefined {
    return this.runsHandedOut.take(id);
  }

  /**
   * The ACK of workflow jobs (their store answered "workflow": the claim holds, nothing was
   * written): each goes through the workflow step with its instance's transition. A failure
   * that leaves attempts runs as an ordinary retry; a success, or a failure for good, ends
   * the run. Returns each item's final result, in order.
   */
  async settleAcks(results: AckResultRecord[], reportOf: (index: number) => RunReport): Promise<OutcomeResult[]> {
    if (!results.some((r) => r.outcome === "workflow")) return results as OutcomeResult[];
    return Promise.all(
      results.map((r, i) => (r.outcome === "workflow" ? this.report(reportOf(i), r.workflow!) : (r as OutcomeResult))),
    );
  }

  /** Applies one run's report, deciding again while a concurrent change wins. */
  private async report(report: RunReport, storedContext: string): Promise<OutcomeResult> {
    const ctx = decodeJobContext(storedContext);
    const ending = report.ack.kind === "complete" || (await this.failsForGood(report.ack));
    return this.steps.inTurn(ctx.instanceId, () => this.reportInTurn(report, ctx.instanceId, ctx, ending));
  }

  private async reportInTurn(
    report: RunReport,
    id: string,
    ctx: { job: string; run: number },
    ending: boolean,
  ): Promise<OutcomeResult> {
    const ws = this.store();
    for (let tries = 0; tries < CONFLICT_RETRIES; tries++) {
      const now = this.o.clock.now();
      const instance = this.steps.cached(id) ?? (await ws.instanceGet({ id }));
      if (!instance) {
        // Deleted by retention meanwhile: the ACK alone.
        const alone = await ws.instanceApply({
          id,
          rev: 0,
          jobs: [],
          cancel: [],
          ack: report.ack,
          now,
        });
        return alone.ack!;
      }
      let t: Transition = { instance, enqueue: [], cancel: [], changed: false };
      if (ending) {
        const { def } = await this.get(instance.workflow, instance.version);
        await this.queuesOf(def);
        const allowed = await this.place(instance.id, workflowQueues(def));
        t = runEnded(
          def,
          instance,
          {
            job: ctx.job,
            run: ctx.run,
            outcome: report.ack.kind === "complete" ? "succeeded" : "failed",
            output: report.output,
            postEvents: report.postEvents,
            now,
          },
          this.assignId(now, allowed),
        );
        const jobs = await this.newJobs(def, t, now, allowed);
        const res = await ws.instanceApply({
          id: instance.id,
          rev: instance.rev,
          instance: t.instance,
          jobs,
          cancel: t.cancel,
          ack: report.ack,
          now,
        });
        if (res.ack && res.ack.outcome !== "acknowledged") return res.ack;
        if (!res.applied) {
          this.steps.forget(id);
          continue;
        }
        this.steps.wrote(t.instance);
        announceInserted(this.o.broker, jobs);
        return res.ack!;
      }
      const res = await ws.instanceApply({
        id: instance.id,
        rev: instance.rev,
        instance,
        jobs: [],
        cancel: [],
        ack: report.ack,
        now,
      });
      if (res.ack && (res.ack.outcome !== "acknowledged" || res.applied)) return res.ack;
      this.steps.forget(id);
    }
    throw busy(`instance ${id}`);
  }

  /** Whether a failure ACK ends its job (no attempts left, or no_retry). */
  private async failsForGood(ack: WorkflowAck): Promise<boolean> {
    if (ack.kind !== "fail") return false;
    if (ack.noRetry) return true;
    const [job] = await this.o.store.jobGetMany({ ids: [ack.id], bodies: false });
    return job !== undefined && job.attemptsRemaining === 0;
  }

  // ---- internals

  private store(): WorkflowStore {
    const ws = this.o.store.workflows;
    if (!ws) throw unsupported(this.o.store.name, "workflows");
    return ws;
  }

  /**
   * Decides and applies a change to an instance, again while a concurrent change wins.
   * `startsRuns: false`: `decide` never starts a run, so the workflow's queues are not looked up.
   */
  private change(
    id: string,
    decide: (def: WorkflowDef, inst: WorkflowInstance, now: number, assign: AssignId) => Transition,
    o: { startsRuns: boolean } = { startsRuns: true },
  ): Promise<WorkflowInstance> {
    return this.steps.inTurn(id, () => this.changeInTurn(id, decide, o.startsRuns));
  }

  private async changeInTurn(
    id: string,
    decide: (def: WorkflowDef, inst: WorkflowInstance, now: number, assign: AssignId) => Transition,
    startsRuns: boolean,
  ): Promise<WorkflowInstance> {
    for (let tries = 0; tries < CONFLICT_RETRIES; tries++) {
      // Read from the store, not the cache: a request from outside sees every node's changes.
      const instance = await this.instance(id);
      const { def } = await this.get(instance.workflow, instance.version);
      if (startsRuns) await this.queuesOf(def);
      const allowed = startsRuns ? await this.place(id, workflowQueues(def)) : undefined;
      const now = this.o.clock.now();
      const assign: AssignId = startsRuns
        ? this.assignId(now, allowed)
        : () => {
            throw new Error(`instance ${id}: a change said to start no run started one`);
          };
      const t = rule(() => decide(def, instance, now, assign));
      if (!t.changed) return instance;
      const jobs = await this.newJobs(def, t, now, allowed);
      const res = await this.store().instanceApply({
        id,
        rev: instance.rev,
        instance: t.instance,
        jobs,
        cancel: t.cancel,
        now,
      });
      if (!res.applied) {
        this.steps.forget(id);
        continue;
      }
      this.steps.wrote(t.instance);
      announceInserted(this.o.broker, jobs);
      return t.instance;
    }
    throw busy(`instance ${id}`);
  }

  /**
   * A queue job id for a run on `queue`: a partition picked as for any job without a key,
   * among the partitions the store allows the instance (on a store of several shards,
   * those on the instance's shard).
   */
  private assignId(now: number, allowed: Allowed): AssignId {
    return (queue) => newJobId(queue, this.partitionOf(queue, allowed?.get(queue)), now);
  }

  private partitionOf(queue: string, allowed: number[] | undefined): number {
    if (allowed) return this.o.partitions.pickAmong(queue, allowed);
    // Round-robin over the queue's config, read by queuesOf before every decision.
    const cached = this.o.queues.peek(queue);
    return cached ? this.o.partitions.pick(queue, "", cached.config) : 0;
  }

  /** The partitions of each queue the store allows instance `id`'s runs (undefined: any). */
  private place(id: string, queues: string[]): Promise<Allowed> {
    return this.store().instancePartitions?.({ id, queues }) ?? Promise.resolve(undefined);
  }

  /** Reads (and checks) the configs of the workflow's queues, so runs can be placed while deciding. */
  private async queuesOf(def: WorkflowDef): Promise<void> {
    for (const job of def.jobs) await this.o.queues.get(job.queue, `workflow ${def.name} job ${job.name} queue`);
  }

  /**
   * The queue jobs of a transition's runs, with their workflow context. A run placed on
   * another partition than the one it was planned on gets its job's id in `t.instance`.
   */
  private async newJobs(def: WorkflowDef, t: Transition, now: number, allowed: Allowed): Promise<NewJob[]> {
    const jobs: NewJob[] = [];
    for (const plan of t.enqueue) jobs.push(await this.newJob(def, t.instance, plan, now, allowed));
    return jobs;
  }

  private async newJob(
    def: WorkflowDef,
    instance: WorkflowInstance,
    plan: RunPlan,
    now: number,
    allowed: Allowed,
  ): Promise<NewJob> {
    const { config } = await this.o.queues.get(plan.queue, `workflow ${def.name} job ${plan.job} queue`);
    const run = instance.jobs[plan.job]!.runs.find((r) => r.run === plan.run)!;
    const where = parseJobId(plan.id)!;
    let id = plan.id;
    let partition = where.partition;
    if (!allowed && partition >= config.partitions) {
      // Picked from a cached view of the queue with more partitions than it has now (deleted
      // and created again with fewer): place it on partition 0, and tell the run its new id,
      // or the instance would name a job that does not exist.
      partition = 0;
      id = newJobId(plan.queue, partition, now);
      run.queueJobId = id;
    }
    return {
      id,
      queue: plan.queue,
      partition,
      priority: Math.min(plan.priority || 1, config.priorities),
      body: plan.body,
      runAfter: now,
      attemptsAllowed: plan.attemptsAllowed || config.defaultAttemptsAllowed,
      customStatus: "",
      createdAt: now,
      idempotencyKey: "",
      orderingKey: storedOrderingKey("", config, "ordering_key"),
      workflow: encodeJobContext({
        workflow: def.name,
        version: def.version,
        instanceId: instance.id,
        job: plan.job,
        run: plan.run,
        triggeredBy: run.triggeredBy,
      }),
    };
  }
}

/** The partitions of each queue an instance's runs may use (Store.workflows.instancePartitions); undefined: any. */
export type Allowed = Map<string, number[]> | undefined;

/** The queues a workflow's jobs run on, each once. */
export function workflowQueues(def: WorkflowDef): string[] {
  return [...new Set(def.jobs.map((j) => j.queue))];
}

/** `wf_` + time (base 36) + 8 random hex digits: sortable by creation, never repeating. */
function newInstanceId(now: number): string {
  // randomUUID draws from a pool of entropy Node refills in bulk; randomBytes(4) made a
  // call into the system's generator per instance. A v4 UUID's first 8 digits are random.
  return `wf_${now.toString(36)}${randomUUID().slice(0, 8)}`;
}

/** Runs a transition, turning a request its state does not allow into failed_precondition. */
function rule(decide: () => Transition): Transition {
  try {
    return decide();
  } catch (err) {
    if (err instanceof WorkflowRuleError) throw new RunlaterError("failed_precondition", "WORKFLOW_RULE", err.message);
    throw err;
  }
}

function checkResult(result: Uint8Array, field: string): void {
  if (result.length > limits.workflowResultBytesMax) {
    throw invalidArgument(field, `${field} is ${result.length} bytes; at most ${limits.workflowResultBytesMax}`);
  }
}

function workflowNotFound(name: string, version?: number): RunlaterError {
  const which = version ? `version ${version} of workflow "${name}"` : `workflow "${name}"`;
  return new RunlaterError(
    "not_found",
    "WORKFLOW_NOT_FOUND",
    `${which} does not exist; define it with ApplyWorkflow`,
    "workflow",
  );
}

function instanceNotFound(id: string): RunlaterError {
  return new RunlaterError(
    "not_found",
    "INSTANCE_NOT_FOUND",
    `workflow instance "${id}" does not exist (or was deleted after its retention)`,
    "instance_id",
  );
}

/** The store does not keep `what` (workflows, schedules) yet. */
export function unsupported(store: string, what: string): RunlaterError {
  return new RunlaterError(
    "failed_precondition",
    "UNSUPPORTED",
    `the ${store} store does not keep ${what} yet; run the server on the SQLite store (the default) or the memory store (docs/workflows.md)`,
  );
}

function busy(what: string): RunlaterError {
  return new RunlaterError("unavailable", "CONFLICT", `${what} kept changing under this call; retry`);
}
