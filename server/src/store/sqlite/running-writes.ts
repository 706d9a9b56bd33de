/**
 * The writes on running jobs on SQLite: the claim-timeout sweep (jobClaimExpire, over
 * jobs_running by claim deadline), and ACK and checkpoint, each fenced by its claim token
 * (transitions.checkClaim) and applied job by job in the batch's order, inside the call's
 * transaction: nothing else writes between a job's read and its write.
 */
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { OutcomeResult } from "../store.js";
import type { SqliteContext } from "./context.js";
import { applyPatch, loadJob } from "./job-writes.js";
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
  const expired = due.map((job) => {
    const patch = transitions.expireClaim(job, p.now);
    applyPatch(ctx, job, patch);
    return { ...job, ...patch };
  });
  const next = ctx.get<{ m: number | null }>("SELECT MIN(claim_expires_at) AS m FROM jobs WHERE state = 'running'")?.m;
  return { expired, nextExpiryAt: next ?? undefined };
}

export function jobCheckpointMany(
  ctx: SqliteContext,
  p: { items: Array<transitions.CheckpointInput & { id: string; claimToken: string }>; now: number },
): OutcomeResult[] {
  return p.items.map((item) =>
    applyToRunning(ctx, item.id, item.claimToken, (job) => transitions.checkpoint(job, item, p.now)),
  );
}

export function jobCompleteMany(
  ctx: SqliteContext,
  p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number },
): OutcomeResult[] {
  return p.items.map((item) =>
    applyToRunning(ctx, item.id, item.claimToken, (job) => transitions.succeed(job, item.customStatus, p.now)),
  );
}

export function jobFailMany(
  ctx: SqliteContext,
  p: { items: Array<transitions.FailureInput & { id: string; claimToken: string }>; now: number },
): OutcomeResult[] {
  return p.items.map((item) =>
    applyToRunning(ctx, item.id, item.claimToken, (job) => transitions.fail(job, item, p.now)),
  );
}

function applyToRunning(
  ctx: SqliteContext,
  id: string,
  claimToken: string,
  decide: (job: JobRecord) => transitions.JobPatch,
): OutcomeResult {
  const job = loadJob(ctx, id);
  const outcome = transitions.checkClaim(job, claimToken);
  if (outcome !== "acknowledged" || !job) return { outcome };
  const patch = decide(job);
  const promoted = applyPatch(ctx, job, patch);
  const after = { ...job, ...patch };
  const result: OutcomeResult = { outcome, pendingAt: after.state === "pending" ? after.runAfter : undefined };
  if (promoted) result.promotedAt = promoted.runAfter;
  return result;
}
