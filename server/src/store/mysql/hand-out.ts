/**
 * The broker's path on MySQL, from a partition's due jobs to running ones: the claim (a read:
 * the jobs are held in this process's memory, held-jobs.ts and claim.ts), the next-due
 * lookup, the release of held jobs, and the start, the one ownership write, fenced by the
 * lease epoch (leases.ts). A start whose plans share their hand-out values is one
 * epoch-fenced UPDATE per group (patch-writes.ts's fast path); any other start locks and
 * decides each job.
 */
import type { JobRecord } from "../../domain/job-record.js";
import type { HandOutPlan, JobPatch } from "../../domain/transitions.js";
import * as transitions from "../../domain/transitions.js";
import { claimDue, nextDueAt } from "./claim.js";
import { addClaimChecks } from "./claim-checks.js";
import { holdsLease } from "./leases.js";
import { CHUNK, type MysqlContext } from "./mysql-context.js";
import { applyPatches, NO_JOB, NotWhole, wholeOrNothing } from "./patch-writes.js";
import * as sql from "./queries.js";
import { type JobRow, setClause, toRecord } from "./rows.js";
import { run, select } from "./shard.js";

export async function jobClaimMany(
  ctx: MysqlContext,
  p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number },
): Promise<JobRecord[]> {
  const shard = await ctx.router.shardOf(p.queue, p.partition);
  // A read and nothing else (docs/mysql.md, "The claim writes nothing"): the jobs stay
  // pending in the table and are held in memory until the broker starts or releases them.
  const claimed = await shard.session(async (c) => {
    const [lease] = await select<{ epoch: number | string }>(c, sql.LEASE_EPOCH, [p.queue, p.partition]);
    if (lease === undefined || Number(lease.epoch) !== p.epoch) return [];
    const held = ctx.held.forClaim(p.queue, p.partition, p.epoch, p.now);
    return held.reads(() => claimDue(c, held, p));
  });
  const patch = transitions.claimIntoBuffer(p.epoch);
  return claimed.map((job) => ({ ...job, ...patch }));
}

export async function jobNextDueAt(
  ctx: MysqlContext,
  p: { queue: string; partition: number },
): Promise<number | undefined> {
  const shard = await ctx.router.shardOf(p.queue, p.partition);
  return shard.session((c) => nextDueAt(c, ctx.held.get(p.queue, p.partition), p.queue, p.partition));
}

export async function jobReleaseBuffered(
  ctx: MysqlContext,
  p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number },
): Promise<number> {
  if (p.ids !== undefined) {
    const held = ctx.held.get(p.queue, p.partition);
    const ours =
      held !== undefined && (held.epoch === p.epoch || (p.belowEpoch !== undefined && held.epoch < p.belowEpoch));
    if (!ours) return 0;
    // Nothing to write: the rows are pending (behind the cursor now: held.release notes them).
    return held.release(p.ids);
  }
  if (p.belowEpoch === undefined) return 0;
  let released = ctx.held.dropBelow(p.queue, p.partition, p.belowEpoch);
  // Rows an earlier runlater marked buffered (its claim wrote the state): after an upgrade.
  const shard = await ctx.router.shardOf(p.queue, p.partition);
  const set = setClause(transitions.unbuffer());
  for (;;) {
    const n = await shard.session((c) =>
      run(c, sql.releaseBufferedBelow(set.sql), [...set.params, p.queue, p.partition, p.belowEpoch!, CHUNK]),
    );
    released += n;
    if (n < CHUNK) return released;
  }
}

export async function jobStartMany(
  ctx: MysqlContext,
  p: { queue: string; partition: number; epoch: number; plans: HandOutPlan[]; now: number },
): Promise<string[]> {
  const held = ctx.held.get(p.queue, p.partition);
  if (!held || held.epoch !== p.epoch) return [];
  // Only jobs this process holds under the epoch: any other was released, started already
  // or claimed under another epoch. Their rows are pending; the lease fences the write.
  const plans = p.plans.filter((plan) => held.jobs.has(plan.id));
  if (plans.length === 0) return [];
  const ids = [...new Set(plans.map((plan) => plan.id))];
  let started: Set<string> | undefined;
  try {
    started = await startHeld(ctx, p, plans);
  } catch (err) {
    // Started or not, the broker has let go of them: a claim finds those still pending.
    held.release(ids);
    throw err;
  }
  // Lease lost: the jobs stay held until a release or the next owner's epoch drops them.
  if (started === undefined) return [];
  // Started, or no longer pending (deleted): either way no longer ours to hand out.
  held.take(ids);
  return plans.map((plan) => plan.id).filter((id) => started.has(id));
}

/** The start's writes: the ids started, or undefined when the lease is no longer at `epoch`. */
async function startHeld(
  ctx: MysqlContext,
  p: { queue: string; partition: number; epoch: number; now: number },
  plans: HandOutPlan[],
): Promise<Set<string> | undefined> {
  const shard = await ctx.router.shardOf(p.queue, p.partition);
  const groups = startGroups(plans);
  if (groups) {
    // Fast path: one epoch-fenced UPDATE per group of equal hand-out values, no read.
    // Rows matched = rows started; anything less is rolled back and decided exactly below.
    const started = await wholeOrNothing(shard, async (c) => {
      let n = 0;
      for (const g of groups) {
        const set = setClause(startPatch(g.plan, p.now));
        n += await run(c, sql.startGroup(set.sql, g.ids.length), [
          p.queue,
          p.partition,
          p.epoch,
          ...set.params,
          ...g.ids,
        ]);
      }
      if (n !== plans.length) throw new NotWhole();
      await addClaimChecks(c, plans);
      return new Set(plans.map((plan) => plan.id));
    });
    if (started) return started;
  }
  const byId = new Map(plans.map((plan) => [plan.id, plan]));
  const ids = [...byId.keys()];
  return shard.transaction(async (c) => {
    if (!(await holdsLease(c, p.queue, p.partition, p.epoch))) return undefined;
    const jobs = (await select<JobRow>(c, sql.selectPendingLocked(ids.length), ids)).map(toRecord);
    const started = await applyPatches(
      c,
      jobs.map((job) => ({ job, patch: transitions.handOut(job, byId.get(job.id)!, p.now) })),
      { sql: "state = 'pending'", params: [] },
    );
    await addClaimChecks(c, started);
    return new Set(jobs.map((j) => j.id));
  });
}

/** Groups of plans sharing one set of hand-out values, at most this many per fast start. */
const START_GROUPS_MAX = 4;

/** handOut without the attempt counters, which sql.startGroup moves in SQL. */
function startPatch(plan: HandOutPlan, now: number): JobPatch {
  const { attempt: _a, attemptsRemaining: _r, ...patch } = transitions.handOut(NO_JOB, plan, now);
  return patch;
}

/**
 * The plans by equal (claim token, expiry, retry delay), when that makes few groups and no
 * job is named twice; otherwise undefined (the exact path decides per job).
 */
function startGroups(plans: HandOutPlan[]): Array<{ plan: HandOutPlan; ids: string[] }> | undefined {
  const groups = new Map<string, { plan: HandOutPlan; ids: string[] }>();
  const seen = new Set<string>();
  for (const plan of plans) {
    if (seen.has(plan.id)) return undefined;
    seen.add(plan.id);
    const key = `${plan.claimToken}\u0000${plan.claimExpiresAt}\u0000${plan.retryDelayMs}`;
    let group = groups.get(key);
    if (!group) {
      if (groups.size >= START_GROUPS_MAX) return undefined;
      groups.set(key, (group = { plan, ids: [] }));
    }
    group.ids.push(plan.id);
  }
  return [...groups.values()];
}
