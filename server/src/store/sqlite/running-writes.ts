/**
 * The writes on running jobs on SQLite: the claim-timeout sweep (jobClaimExpire, over
 * jobs_running by claim deadline), and ACK and checkpoint, each fenced by its claim token
 * (transitions.checkClaim) and decided item by item in the batch's order, inside the call's
 * transaction: nothing else writes between a job's read and its write.
 */
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { AckResultRecord, OutcomeResult } from "../store.js";
import type { SqliteContext } from "./context.js";
import { applyPatches, type Change, loadJobs } from "./job-writes.js";
import { JOB_COLUMNS, type JobRow, toRecord } from "./rows.js";

export function jobClaimExpire(
  ctx: SqliteContext,
  p: { now: number; limit: number },
): { expired: JobRecord[]; nextExpiryAt?: number } {
  const due = ctx
    .all<JobRow>(
      `SELECT ${JOB_COLUMNS} FROM jobs WHERE state = 'running' AND claim_expires_at <= ? ORDER BY claim_expires_at, seq LIMIT ?`,
      p.now,
      p.limit,
    )
    .map(toRecord)
    .filter((job) => !ctx.deleting.has(job.queue));
  const changes = due.map((job) => ({ job, patch: transitions.expireClaim(job, p.now) }));
  applyPatches(ctx, changes);
  const expired = changes.map(({ job, patch }) => ({ ...job, ...patch }));
  const next = ctx.get<{ m: number | null }>("SELECT MIN(claim_expires_at) AS m FROM jobs WHERE state = 'running'")?.m;
  return { expired, nextExpiryAt: next ?? undefined };
}

export function jobCheckpointMany(
  ctx: SqliteContext,
  p: { items: Array<transitions.CheckpointInput & { id: string; claimToken: string }>; now: number },
): OutcomeResult[] {
  return applyToRunning(ctx, p.items, (job, item) => transitions.checkpoint(job, item, p.now));
}

export function jobCompleteMany(
  ctx: SqliteContext,
  p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number },
): AckResultRecord[] {
  return (
    completeFast(ctx, p) ??
    applyToRunning(ctx, p.items, (job, item) => transitions.succeed(job, item.customStatus, p.now), "ack")
  );
}

/**
 * The usual ACK: jobs that succeeded with no custom status to add, under their hand-outs'
 * claim tokens. Then succeed() changes the same columns the same way for every job (the
 * status stays as it is), so one UPDATE per claim token writes it, its WHERE the whole
 * claim fence (checkClaim in SQL); a keyed job, whose end must promote the next, and a
 * workflow job, whose ACK is left to its instance (below), never match. If any item does not match (stale, unknown, named twice, keyed), the savepoint is
 * rolled back and the exact path decides every item. Saves reading the rows: a third of an
 * ACK's cost.
 */
function completeFast(
  ctx: SqliteContext,
  p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number },
): OutcomeResult[] | undefined {
  if (p.items.some((i) => i.customStatus !== "" || i.claimToken === "") || ctx.deleting.size > 0) return undefined;
  const byToken = new Map<string, string[]>();
  for (const item of p.items) byToken.set(item.claimToken, [...(byToken.get(item.claimToken) ?? []), item.id]);
  ctx.run("SAVEPOINT fast_ack");
  const queues = new Map<string, number>();
  for (const [token, ids] of byToken) {
    const done = ctx.all<{ queue: string }>(
      "UPDATE jobs SET state = 'succeeded', claim_expires_at = 0, finished_at = ?, updated_at = ? " +
        "WHERE id IN (SELECT value FROM json_each(?)) AND state = 'running' AND claim_token = ? AND ordering_key IS NULL AND workflow IS NULL " +
        "RETURNING queue",
      p.now,
      p.now,
      JSON.stringify(ids),
      token,
    );
    if (done.length !== ids.length) {
      ctx.run("ROLLBACK TO fast_ack");
      ctx.run("RELEASE fast_ack");
      return undefined;
    }
    for (const { queue } of done) queues.set(queue, (queues.get(queue) ?? 0) + 1);
  }
  ctx.run("RELEASE fast_ack");
  for (const [queue, n] of queues) ctx.count(queue, "running", "succeeded", n);
  return p.items.map(() => ({ outcome: "acknowledged", pendingAt: undefined }));
}

export function jobFailMany(
  ctx: SqliteContext,
  p: { items: Array<transitions.FailureInput & { id: string; claimToken: string }>; now: number },
): AckResultRecord[] {
  return applyToRunning(ctx, p.items, (job, item) => transitions.fail(job, item, p.now), "ack");
}

/**
 * Each item in order, fenced by its claim token; a job named twice sees the first change.
 * The batch's jobs are read with one statement and written with one UPDATE per run of
 * equal patches (job-writes.ts). An ACK (`kind` "ack") of a workflow job's run writes
 * nothing and answers "workflow" with the job's context: Store.workflows.instanceApply
 * applies it with its instance's transition. A checkpoint applies to it as to any job.
 */
function applyToRunning<T extends { id: string; claimToken: string }>(
  ctx: SqliteContext,
  items: T[],
  decide: (job: JobRecord, item: T) => transitions.JobPatch,
): OutcomeResult[];
function applyToRunning<T extends { id: string; claimToken: string }>(
  ctx: SqliteContext,
  items: T[],
  decide: (job: JobRecord, item: T) => transitions.JobPatch,
  kind: "ack",
): AckResultRecord[];
function applyToRunning<T extends { id: string; claimToken: string }>(
  ctx: SqliteContext,
  items: T[],
  decide: (job: JobRecord, item: T) => transitions.JobPatch,
  kind: "ack" | "checkpoint" = "checkpoint",
): AckResultRecord[] {
  const jobs = loadJobs(
    ctx,
    items.map((item) => item.id),
  );
  const changes: Change[] = [];
  const changed: OutcomeResult[] = [];
  const results = items.map((item): AckResultRecord => {
    const job = jobs.get(item.id);
    const outcome = transitions.checkClaim(job, item.claimToken);
    if (outcome !== "acknowledged" || !job) return { outcome };
    if (kind === "ack" && job.workflow !== undefined) return { outcome: "workflow", workflow: job.workflow };
    const patch = decide(job, item);
    const after = { ...job, ...patch };
    jobs.set(item.id, after);
    changes.push({ job, patch });
    const result: OutcomeResult = { outcome, pendingAt: after.state === "pending" ? after.runAfter : undefined };
    changed.push(result);
    return result;
  });
  applyPatches(ctx, changes).forEach((promoted, i) => {
    if (promoted) changed[i]!.promotedAt = promoted.runAfter;
  });
  return results;
}
