/**
 * The broker's path on SQLite, from a partition's due jobs to running ones: the claim
 * (pending to buffered, best first, under the lease epoch), the next-due lookup, the
 * release of buffered jobs, and the start (buffered to running per its plan). The claim
 * and the start check the lease epoch in the same transaction as their writes.
 */
import { byteBudget } from "../../domain/byte-budget.js";
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { SqliteContext } from "./context.js";
import { applyPatch, loadJob } from "./job-writes.js";
import { holdsLease } from "./leases.js";
import { JOB_COLUMNS, type JobRow, toRecord } from "./rows.js";

/** A priority level's due jobs in dequeue order (jobs_pending: run_after, then seq). */
const DUE =
  `SELECT ${JOB_COLUMNS} FROM jobs WHERE queue = ? AND part = ? AND state = 'pending' AND priority = ? ` +
  "AND run_after <= ? ORDER BY run_after, seq LIMIT ?";

export function jobClaimMany(
  ctx: SqliteContext,
  p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number },
): JobRecord[] {
  const config = ctx.config(p.queue);
  if (!config || !holdsLease(ctx, p.queue, p.partition, p.epoch)) return [];
  const picked: JobRecord[] = [];
  const fits = byteBudget(p.maxBytes);
  levels: for (let priority = 1; priority <= config.priorities && picked.length < p.limit; priority++) {
    // iterate, not all: a byte bound may stop the claim after the first few big bodies.
    for (const row of ctx.stmt(DUE).iterate(p.queue, p.partition, priority, p.now, p.limit - picked.length)) {
      const job = toRecord(row as unknown as JobRow);
      if (!fits(job.body.length)) break levels;
      picked.push(job);
    }
  }
  // Written once the reads are done: no row changes under a statement still reading.
  const patch = transitions.claimIntoBuffer(p.epoch);
  for (const job of picked) applyPatch(ctx, job, patch);
  return picked.map((job) => ({ ...job, ...patch }));
}

export function jobNextDueAt(ctx: SqliteContext, p: { queue: string; partition: number }): number | undefined {
  const config = ctx.config(p.queue);
  let next: number | undefined;
  for (let priority = 1; priority <= (config?.priorities ?? 0); priority++) {
    const at = ctx.get<{ m: number | null }>(
      "SELECT MIN(run_after) AS m FROM jobs WHERE queue = ? AND part = ? AND state = 'pending' AND priority = ?",
      p.queue,
      p.partition,
      priority,
    )?.m;
    if (at !== null && at !== undefined && (next === undefined || at < next)) next = at;
  }
  return next;
}

export function jobReleaseBuffered(
  ctx: SqliteContext,
  p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number },
): number {
  const candidates =
    p.ids?.map((id) => loadJob(ctx, id)) ??
    ctx
      .all<JobRow>(
        `SELECT ${JOB_COLUMNS} FROM jobs WHERE queue = ? AND part = ? AND state = 'buffered' AND buffer_epoch < ?`,
        p.queue,
        p.partition,
        p.belowEpoch ?? 0,
      )
      .map(toRecord);
  let released = 0;
  for (const job of candidates) {
    if (job?.state !== "buffered") continue;
    const mine = p.ids !== undefined && job.bufferEpoch === p.epoch;
    const stale = p.belowEpoch !== undefined && job.bufferEpoch < p.belowEpoch;
    if (!mine && !stale) continue;
    applyPatch(ctx, job, transitions.unbuffer());
    released++;
  }
  return released;
}

export function jobStartMany(
  ctx: SqliteContext,
  p: { queue: string; partition: number; epoch: number; plans: transitions.HandOutPlan[]; now: number },
): string[] {
  if (!holdsLease(ctx, p.queue, p.partition, p.epoch)) return [];
  const started: string[] = [];
  for (const plan of p.plans) {
    const job = loadJob(ctx, plan.id);
    if (job?.state !== "buffered" || job.bufferEpoch !== p.epoch) continue;
    applyPatch(ctx, job, transitions.handOut(job, plan, p.now));
    started.push(plan.id);
  }
  return started;
}
