/**
 * The writes a workflow operation shares with a schedule's fire (workflows.ts,
 * schedules.ts), and the rows they cross the channel as: an instance inserted with its
 * first queue jobs, an instance's row written, queue jobs cancelled.
 */
import type { NewJob } from "../../domain/job-record.js";
import type { InstanceState } from "../../domain/workflow-transitions.js";
import type { SqliteContext } from "./context.js";
import { jobInsertMany } from "./insert-jobs.js";
import { loadJobs, removeJobs } from "./job-writes.js";

/** A definition as stored: its text (workflow-codec.ts) and when its version was made. */
export interface WorkflowRow {
  definition: string;
  createdAt: number;
}

/** An instance as stored: the columns its indexes need, and its text (workflow-codec.ts). */
export interface InstanceRow {
  id: string;
  workflow: string;
  state: InstanceState;
  rev: number;
  createdAt: number;
  /** NULL while it runs, so retention's index holds ended instances only. */
  endedAt: number | null;
  text: string;
}

/** instanceInsert, which a schedule's fire (schedules.ts) makes part of its step. */
export function insertInstance(ctx: SqliteContext, p: { instance: InstanceRow; jobs: NewJob[]; now: number }): boolean {
  if (ctx.get("SELECT 1 FROM workflow_instances WHERE id = ?", p.instance.id)) return false;
  jobInsertMany(ctx, { jobs: p.jobs, now: p.now }); // throws before writing if a queue is gone
  writeInstance(ctx, p.instance);
  return true;
}

/** Inserts or replaces an instance's row. */
export function writeInstance(ctx: SqliteContext, i: InstanceRow): void {
  ctx.run(
    "INSERT INTO workflow_instances (id, workflow, state, rev, created_at, ended_at, instance) VALUES (?, ?, ?, ?, ?, ?, ?) " +
      "ON CONFLICT (id) DO UPDATE SET workflow = excluded.workflow, state = excluded.state, rev = excluded.rev, " +
      "created_at = excluded.created_at, ended_at = excluded.ended_at, instance = excluded.instance",
    i.id,
    i.workflow,
    i.state,
    i.rev,
    i.createdAt,
    i.endedAt,
    i.text,
  );
}

/**
 * Deletes the jobs named that no worker holds and that have not ended: pending (buffered
 * ones are pending in their rows, and stop being held) or waiting. One that had not ended
 * lets the next job of its ordering key go (removeJobs).
 */
export function cancelJobs(ctx: SqliteContext, ids: string[], now: number): void {
  if (ids.length === 0) return;
  const doomed = [...loadJobs(ctx, ids).values()].filter((j) => j.state === "pending" || j.state === "waiting");
  removeJobs(ctx, doomed, now);
}
