/**
 * Workflows on SQLite (Store.workflows, docs/workflows.md), on the thread that owns the
 * database: each method is one of these operations, so it runs in one savepoint of a group
 * commit and nothing else writes between its checks and its writes. Definitions, instances
 * and schedules cross the channel as the text workflow-codec.ts makes of them (encoded and
 * decoded on the server's thread, workflow-store.ts); a row keeps that text beside the
 * columns its indexes need.
 *
 * instanceApply is the memory store's step (memory/workflows.ts) in SQL: the ACK's job must
 * hold the claim token and be a workflow job's run, the instance must be at the revision the
 * step was decided on; then the new queue jobs are inserted (the enqueue's own insert), the
 * ACK's transition is applied (transitions.succeed or fail; a job that ends promotes the next
 * of its ordering key, possibly one just inserted), the instance is written, and the jobs to
 * cancel are deleted where no worker holds them and they have not ended.
 */
import type { JobRecord, NewJob } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { InstanceState } from "../../domain/workflow-transitions.js";
import type { OutcomeResult, WorkflowAck } from "../store.js";
import type { SqliteContext } from "./context.js";
import { releaseFreePages } from "./free-pages.js";
import { jobInsertMany } from "./insert-jobs.js";
import { cancelJobs, type InstanceRow, insertInstance, type WorkflowRow, writeInstance } from "./instance-writes.js";
import { applyPatch, loadJobs } from "./job-writes.js";

export function workflowInsert(
  ctx: SqliteContext,
  p: { name: string; version: number; definition: string; now: number },
): boolean {
  return (
    ctx.run(
      "INSERT INTO workflow_versions (name, version, created_at, definition) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
      p.name,
      p.version,
      p.now,
      p.definition,
    ) === 1
  );
}

export function workflowGet(ctx: SqliteContext, p: { name: string; version?: number }): WorkflowRow | undefined {
  const row =
    p.version === undefined
      ? ctx.get<{ definition: string; created_at: number }>(
          "SELECT definition, created_at FROM workflow_versions WHERE name = ? ORDER BY version DESC LIMIT 1",
          p.name,
        )
      : ctx.get<{ definition: string; created_at: number }>(
          "SELECT definition, created_at FROM workflow_versions WHERE name = ? AND version = ?",
          p.name,
          p.version,
        );
  return row && { definition: row.definition, createdAt: row.created_at };
}

/**
 * The latest version of up to `limit` workflows, by name, after `after`: two dives of the
 * primary key per name (the next name, its last version). `after` in the answer is where
 * the next chunk starts; absent when every name has been read.
 */
export function workflowListChunk(
  ctx: SqliteContext,
  p: { after?: string; limit: number },
): { workflows: WorkflowRow[]; after?: string } {
  const workflows: WorkflowRow[] = [];
  let after = p.after;
  while (workflows.length < p.limit) {
    const next = ctx.get<{ name: string }>(
      after === undefined
        ? "SELECT name FROM workflow_versions ORDER BY name LIMIT 1"
        : "SELECT name FROM workflow_versions WHERE name > ? ORDER BY name LIMIT 1",
      ...(after === undefined ? [] : [after]),
    );
    if (!next) return { workflows };
    workflows.push(workflowGet(ctx, { name: next.name })!);
    after = next.name;
  }
  return { workflows, after };
}

export function instanceInsert(ctx: SqliteContext, p: { instance: InstanceRow; jobs: NewJob[]; now: number }): boolean {
  return insertInstance(ctx, p);
}

export function instanceGet(ctx: SqliteContext, p: { id: string }): string | undefined {
  return ctx.get<{ instance: string }>("SELECT instance FROM workflow_instances WHERE id = ?", p.id)?.instance;
}

/**
 * Instances newest first (created_at, then id, descending) after a keyset cursor: each
 * combination of filters has its index (instances_created, _workflow, _state,
 * _workflow_state), read backwards from the cursor for `limit` entries.
 */
export function instanceList(
  ctx: SqliteContext,
  p: { workflow?: string; state?: InstanceState; limit: number; after?: { createdAt: number; id: string } },
): string[] {
  const where: string[] = [];
  const params: Array<string | number> = [];
  if (p.workflow !== undefined) {
    where.push("workflow = ?");
    params.push(p.workflow);
  }
  if (p.state !== undefined) {
    where.push("state = ?");
    params.push(p.state);
  }
  if (p.after) {
    where.push("(created_at, id) < (?, ?)");
    params.push(p.after.createdAt, p.after.id);
  }
  // One of eight fixed statement texts (prepared once each).
  const sql =
    `SELECT instance FROM workflow_instances${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ` +
    "ORDER BY created_at DESC, id DESC LIMIT ?";
  return ctx.all<{ instance: string }>(sql, ...params, p.limit).map((r) => r.instance);
}

export function instanceApply(
  ctx: SqliteContext,
  p: {
    id: string;
    rev: number;
    instance?: InstanceRow;
    jobs: NewJob[];
    cancel: string[];
    ack?: WorkflowAck;
    now: number;
  },
): { applied: boolean; ack?: OutcomeResult } {
  // The checks first: when one fails, nothing is written.
  let acked: JobRecord | undefined;
  if (p.ack) {
    acked = loadJobs(ctx, [p.ack.id]).get(p.ack.id);
    const outcome = transitions.checkClaim(acked, p.ack.claimToken);
    if (outcome !== "acknowledged" || acked?.workflow === undefined)
      return { applied: false, ack: { outcome: outcome === "acknowledged" ? "not_found" : outcome } };
  }
  const stored = ctx.get<{ rev: number }>("SELECT rev FROM workflow_instances WHERE id = ?", p.id);
  if ((stored?.rev ?? 0) !== p.rev) return { applied: false };
  jobInsertMany(ctx, { jobs: p.jobs, now: p.now }); // throws (the savepoint rolls back) if a queue is gone
  const ack = p.ack && acked && applyAck(ctx, acked, p.ack, p.now);
  if (p.instance) writeInstance(ctx, p.instance);
  cancelJobs(ctx, p.cancel, p.now);
  return { applied: true, ack };
}

/** Deletes up to `limit` ended instances that ended before `endedBefore`, oldest end first (instances_ended). */
export function instanceDeleteEnded(ctx: SqliteContext, p: { endedBefore: number; limit: number }): number {
  const deleted = ctx.run(
    "DELETE FROM workflow_instances WHERE rowid IN " +
      "(SELECT rowid FROM workflow_instances WHERE ended_at < ? ORDER BY ended_at LIMIT ?)",
    p.endedBefore,
    p.limit,
  );
  if (deleted > 0) releaseFreePages(ctx);
  return deleted;
}

/** The ACK's transition on its job (checked above, in the same operation), as jobCompleteMany / jobFailMany decide it. */
function applyAck(ctx: SqliteContext, job: JobRecord, ack: WorkflowAck, now: number): OutcomeResult {
  const patch =
    ack.kind === "complete" ? transitions.succeed(job, ack.customStatus, now) : transitions.fail(job, ack, now);
  const promoted = applyPatch(ctx, job, patch);
  const after = { ...job, ...patch };
  const result: OutcomeResult = {
    outcome: "acknowledged",
    pendingAt: after.state === "pending" ? after.runAfter : undefined,
  };
  if (promoted) result.promotedAt = promoted.runAfter;
  return result;
}
