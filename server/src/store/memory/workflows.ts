/**
 * Workflows in memory (Store.workflows, docs/workflows.md): definitions by name and
 * version, instances by id. Every instanceApply is one synchronous step over the instance,
 * the jobs and the ACK of a run: nothing else runs between its checks and its writes.
 * Records go in and out as copies.
 */

import type { NewJob } from "../../domain/job-record.js";
import { clonePlain } from "../../domain/plain-data.js";
import * as transitions from "../../domain/transitions.js";
import type { WorkflowDef } from "../../domain/workflow-definition.js";
import type { InstanceState, WorkflowInstance } from "../../domain/workflow-transitions.js";
import type { OutcomeResult, StoredWorkflow, WorkflowAck, WorkflowStore } from "../store.js";
import { insertJobs } from "./insert-jobs.js";
import type { MemoryState } from "./memory-state.js";
import { applyToRunning } from "./running-writes.js";

/** A queue job in these states may be cancelled: no worker has it, and it has not ended. */
const CANCELLABLE = new Set(["pending", "waiting", "buffered"]);

/** Deletes the jobs named that may be cancelled; leaves running and ended ones. */
export function cancelJobs(state: MemoryState, ids: string[], now: number): void {
  for (const id of ids) {
    const slot = state.jobs.get(id);
    if (slot && CANCELLABLE.has(slot.job.state)) state.remove(slot, now);
  }
}

export class MemoryWorkflows implements WorkflowStore {
  /** Versions of each workflow, oldest first. */
  private readonly workflows = new Map<string, StoredWorkflow[]>();
  private readonly instances = new Map<string, WorkflowInstance>();

  constructor(private readonly state: MemoryState) {}

  async workflowInsert(p: { def: WorkflowDef; now: number }): Promise<boolean> {
    const versions = this.workflows.get(p.def.name) ?? [];
    if (versions.some((v) => v.def.version === p.def.version)) return false;
    versions.push({ def: clonePlain(p.def), createdAt: p.now });
    versions.sort((a, b) => a.def.version - b.def.version);
    this.workflows.set(p.def.name, versions);
    return true;
  }

  async workflowGet(p: { name: string; version?: number }): Promise<StoredWorkflow | undefined> {
    const versions = this.workflows.get(p.name) ?? [];
    const found =
      p.version === undefined ? versions[versions.length - 1] : versions.find((v) => v.def.version === p.version);
    return found && clonePlain(found);
  }

  async workflowList(): Promise<StoredWorkflow[]> {
    return [...this.workflows.keys()].sort().map((name) => clonePlain(this.workflows.get(name)!.at(-1)!));
  }

  async instanceInsert(p: { instance: WorkflowInstance; jobs: NewJob[]; now: number }): Promise<boolean> {
    return this.insertInstance(p);
  }

  /** instanceInsert as one synchronous step (schedules.ts makes it part of a fire). */
  insertInstance(p: { instance: WorkflowInstance; jobs: NewJob[]; now: number }): boolean {
    if (this.instances.has(p.instance.id)) return false;
    insertJobs(this.state, { jobs: p.jobs, now: p.now }); // throws before writing if a queue is gone
    this.instances.set(p.instance.id, clonePlain(p.instance));
    return true;
  }

  async instanceGet(p: { id: string }): Promise<WorkflowInstance | undefined> {
    const found = this.instances.get(p.id);
    return found && clonePlain(found);
  }

  async instanceList(p: {
    workflow?: string;
    state?: InstanceState;
    limit: number;
    after?: { createdAt: number; id: string };
  }): Promise<WorkflowInstance[]> {
    const after = p.after;
    return [...this.instances.values()]
      .filter(
        (i) =>
          (p.workflow === undefined || i.workflow === p.workflow) && (p.state === undefined || i.state === p.state),
      )
      .filter((i) => !after || i.createdAt < after.createdAt || (i.createdAt === after.createdAt && i.id < after.id))
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .slice(0, p.limit)
      .map((i) => clonePlain(i));
  }

  async instanceApply(p: {
    id: string;
    rev: number;
    instance?: WorkflowInstance;
    jobs: NewJob[];
    cancel: string[];
    ack?: WorkflowAck;
    now: number;
  }): Promise<{ applied: boolean; ack?: OutcomeResult }> {
    if (p.ack) {
      const job = this.state.jobs.get(p.ack.id)?.job;
      const outcome = transitions.checkClaim(job, p.ack.claimToken);
      if (outcome !== "acknowledged" || job?.workflow === undefined) {
        return { applied: false, ack: { outcome: outcome === "acknowledged" ? "not_found" : outcome } };
      }
    }
    const current = this.instances.get(p.id);
    if ((current?.rev ?? 0) !== p.rev) return { applied: false };
    // One synchronous step from the checks above to the last write (no await in between).
    insertJobs(this.state, { jobs: p.jobs, now: p.now }); // throws before writing if a queue is gone
    const ack = p.ack && this.applyAck(p.ack, p.now);
    if (p.instance) this.instances.set(p.id, clonePlain(p.instance));
    cancelJobs(this.state, p.cancel, p.now);
    return { applied: true, ack };
  }

  async instanceDeleteEnded(p: { endedBefore: number; limit: number }): Promise<number> {
    // Oldest end first (ties by id), as the other stores' retention indexes order them.
    const ended = [...this.instances.values()]
      .filter((i) => i.state !== "running" && i.endedAt < p.endedBefore)
      .sort((a, b) => a.endedAt - b.endedAt || (a.id < b.id ? -1 : 1))
      .slice(0, p.limit);
    for (const instance of ended) this.instances.delete(instance.id);
    return ended.length;
  }

  private applyAck(ack: WorkflowAck, now: number): OutcomeResult {
    return ack.kind === "complete"
      ? applyToRunning(this.state, ack.id, ack.claimToken, (job) => transitions.succeed(job, ack.customStatus, now))
      : applyToRunning(this.state, ack.id, ack.claimToken, (job) => transitions.fail(job, ack, now));
  }
}
