/**
 * The broker's path on SQLite, from a partition's due jobs to running ones: the claim
 * (best first, under the lease epoch), the next-due lookup, the release of buffered jobs,
 * and the start (buffered to running per its plan). The claim and the release write
 * nothing: buffered jobs are held in memory and stay pending in their rows (held-jobs.ts);
 * the start is their one write. The claim and the start check the lease epoch first.
 */
import { byteBudget } from "../../domain/byte-budget.js";
import type { JobRecord } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { SqliteContext } from "./context.js";
import { applyPatches, type Change } from "./job-writes.js";
import { JOB_COLUMNS, type JobRow, toRecord } from "./rows.js";

/**
 * A priority level's due jobs in dequeue order, index only (jobs_pending: run_after, then
 * seq): the claim reads past the jobs already held, which are the level's first as a rule.
 */
const DUE_SEQS =
  "SELECT seq FROM jobs WHERE queue = ? AND part = ? AND state = 'pending' AND priority = ? AND run_after <= ? " +
  "ORDER BY run_after, seq LIMIT ?";

export function jobClaimMany(
  ctx: SqliteContext,
  p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number },
): JobRecord[] {
  const config = ctx.config(p.queue);
  if (!config || !holdsLease(ctx, p.queue, p.partition, p.epoch)) return [];
  const held = ctx.held.inPartition(p.queue, p.partition);
  const seqs: number[] = [];
  for (let priority = 1; priority <= config.priorities && seqs.length < p.limit; priority++) {
    const want = p.limit - seqs.length;
    for (const { seq } of ctx.all<{ seq: number }>(DUE_SEQS, p.queue, p.partition, priority, p.now, want + held.size)) {
      if (held.has(seq)) continue;
      seqs.push(seq);
      if (seqs.length === p.limit) break;
    }
  }
  const chosen = p.maxBytes === undefined ? seqs : withinBytes(ctx, seqs, p.maxBytes);
  const rows = ctx.all<JobRow>(
    `SELECT ${JOB_COLUMNS} FROM jobs WHERE seq IN (SELECT value FROM json_each(?))`,
    JSON.stringify(chosen),
  );
  const bySeq = new Map(rows.map((row) => [row.seq, row]));
  return chosen.map((seq) => {
    const job = toRecord(bySeq.get(seq)!);
    ctx.held.hold(job, p.epoch);
    return ctx.held.overlay(job);
  });
}

/**
 * The jobs of `seqs` (in claim order) that fit `maxBytes` of bodies (byteBudget: the first
 * always does), found from the bodies' lengths alone: no body is read that is not claimed.
 */
function withinBytes(ctx: SqliteContext, seqs: number[], maxBytes: number): number[] {
  const sizes = new Map(
    ctx
      .all<{ seq: number; size: number }>(
        "SELECT seq, length(body) AS size FROM jobs WHERE seq IN (SELECT value FROM json_each(?))",
        JSON.stringify(seqs),
      )
      .map((r) => [r.seq, r.size]),
  );
  const fits = byteBudget(maxBytes);
  const chosen: number[] = [];
  for (const seq of seqs) {
    if (!fits(sizes.get(seq)!)) break;
    chosen.push(seq);
  }
  return chosen;
}

export function jobNextDueAt(ctx: SqliteContext, p: { queue: string; partition: number }): number | undefined {
  const config = ctx.config(p.queue);
  const held = ctx.held.inPartition(p.queue, p.partition);
  let next: number | undefined;
  for (let priority = 1; priority <= (config?.priorities ?? 0); priority++) {
    // The level's first job not held (buffered jobs are not pending to the broker).
    const first = ctx
      .all<{ seq: number; run_after: number }>(
        "SELECT seq, run_after FROM jobs WHERE queue = ? AND part = ? AND state = 'pending' AND priority = ? " +
          "ORDER BY run_after, seq LIMIT ?",
        p.queue,
        p.partition,
        priority,
        held.size + 1,
      )
      .find((row) => !held.has(row.seq));
    if (first && (next === undefined || first.run_after < next)) next = first.run_after;
  }
  return next;
}

export function jobReleaseBuffered(
  ctx: SqliteContext,
  p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number },
): number {
  const candidates = p.ids
    ? p.ids.flatMap((id) => ctx.held.get(id) ?? [])
    : [...ctx.held.inPartition(p.queue, p.partition).values()];
  let released = 0;
  for (const held of candidates) {
    const mine = p.ids !== undefined && held.epoch === p.epoch;
    const stale = p.belowEpoch !== undefined && held.epoch < p.belowEpoch;
    // unbuffer: the row says pending already; nothing to write.
    if ((mine || stale) && ctx.held.drop(held.job.id)) released++;
  }
  return released;
}

export function jobStartMany(
  ctx: SqliteContext,
  p: { queue: string; partition: number; epoch: number; plans: transitions.HandOutPlan[]; now: number },
): string[] {
  if (!holdsLease(ctx, p.queue, p.partition, p.epoch)) return [];
  const changes: Change[] = [];
  const started: string[] = [];
  for (const plan of p.plans) {
    const held = ctx.held.get(plan.id);
    if (held?.epoch !== p.epoch) continue;
    ctx.held.drop(plan.id);
    // Held means unchanged since the claim read it: the row is the held record (pending).
    changes.push({ job: held.job, patch: transitions.handOut(held.job, plan, p.now) });
    started.push(plan.id);
  }
  applyPatches(ctx, changes);
  return started;
}

/** The fence of the claim and the start: `epoch` is the partition's current (unreleased) lease's (leases.ts). */
function holdsLease(ctx: SqliteContext, queue: string, partition: number, epoch: number): boolean {
  const row = ctx.get<{ owner: string; epoch: number }>(
    "SELECT owner, epoch FROM leases WHERE queue = ? AND part = ?",
    queue,
    partition,
  );
  return row !== undefined && row.owner !== "" && row.epoch === epoch;
}
