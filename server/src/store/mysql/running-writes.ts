/**
 * The writes on running jobs on MySQL: the claim-timeout sweep (jobClaimExpire), and ACK
 * and checkpoint (complete, fail, checkpoint) fenced by the claim token. Each locks its
 * jobs, decides them with domain/transitions.ts and writes them in one transaction, in which
 * a job with an ordering key that ends also promotes the next (ordering.ts); an ACK without
 * custom status takes the fast path (applyByToken), which writes without reading first.
 * An ACK of a workflow job's run writes nothing and answers "workflow" with the job's
 * context (Store.workflows.instanceApply applies it, workflows.ts); the fast path never
 * matches such a job, so the exact path tells it apart.
 * Jobs these writes put back to pending, or promote, are noted in the held jobs (held-jobs.ts):
 * they may sit behind a claim's cursor.
 */
import type { JobRecord } from "../../domain/job-record.js";
import type { CheckpointInput, FailureInput, JobPatch } from "../../domain/transitions.js";
import * as transitions from "../../domain/transitions.js";
import { type Located, partitionOfId } from "../shard-router.js";
import type { AckResultRecord, OutcomeResult } from "../store.js";
import { addClaimChecks, nextClaimCheck, takeDueChecks } from "./claim-checks.js";
import type { MysqlContext } from "./mysql-context.js";
import { leaveSequences } from "./ordering.js";
import { applyPatches, NO_JOB, NotWhole, wholeOrNothing } from "./patch-writes.js";
import * as sql from "./queries.js";
import { type JobRow, patchManyStatement, setClause, toRecord } from "./rows.js";
import { type Param, run, type Shard, select } from "./shard.js";

export async function jobClaimExpire(
  ctx: MysqlContext,
  p: { now: number; limit: number },
): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
  const expired: JobRecord[] = [];
  let nextExpiryAt: number | undefined;
  for (const shard of ctx.shards) {
    // One short transaction per round, each looking at no more jobs than may still expire,
    // until the limit is reached or no check is due. Most checks find their jobs acknowledged:
    // a round that expires nothing still deleted its checks, so the loop ends.
    while (expired.length < p.limit) {
      const round = await shard.transaction(async (c) => {
        const ids = await takeDueChecks(c, p.now, p.limit - expired.length);
        if (ids.length === 0) return undefined;
        const rows = (await select<JobRow>(c, sql.expiredClaims(ids.length), [...ids, p.now])).map(toRecord);
        const changed = await applyPatches(
          c,
          rows.map((job) => ({ job, patch: transitions.expireClaim(job, p.now) })),
        );
        return { changed, promotedBy: await leaveSequences(c, changed.filter(endedWithKey), p.now) };
      });
      if (!round) break;
      expired.push(...round.changed);
      // Committed: jobs back to pending, and promoted ones, may sit behind a claim's cursor.
      for (const job of round.changed)
        if (job.state === "pending") ctx.held.noteQueued(job.id, job.priority, job.runAfter);
      for (const [id, at] of round.promotedBy) ctx.held.noteQueued(id, undefined, at);
    }
    const next = await shard.session((c) => nextClaimCheck(c, p.now));
    if (next !== undefined) nextExpiryAt = Math.min(nextExpiryAt ?? Infinity, next);
  }
  return { expired, nextExpiryAt };
}

export async function jobCheckpointMany(
  ctx: MysqlContext,
  p: { items: Array<CheckpointInput & { id: string; claimToken: string }>; now: number },
): Promise<OutcomeResult[]> {
  // A checkpoint applies to a workflow job's run as to any job: it never answers "workflow".
  const decide = (job: JobRecord, item: CheckpointInput) => transitions.checkpoint(job, item, p.now);
  return applyToRunning(ctx, p.items, p.now, decide, "checkpoint") as Promise<OutcomeResult[]>;
}

export async function jobCompleteMany(
  ctx: MysqlContext,
  p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number },
): Promise<AckResultRecord[]> {
  // Without a custom status, succeed sets the same fields on every job (the status stays):
  // the fast path can write it by claim token without reading the rows first.
  const { customStatus: _, ...same } = transitions.succeed(NO_JOB, "", p.now);
  const fast = (item: { customStatus: string }) => (item.customStatus === "" ? same : undefined);
  const decide = (job: JobRecord, item: { customStatus: string }) => transitions.succeed(job, item.customStatus, p.now);
  return applyToRunning(ctx, p.items, p.now, decide, "ack", fast);
}

export async function jobFailMany(
  ctx: MysqlContext,
  p: { items: Array<FailureInput & { id: string; claimToken: string }>; now: number },
): Promise<AckResultRecord[]> {
  return applyToRunning(ctx, p.items, p.now, (job, item) => transitions.fail(job, item, p.now), "ack");
}

/**
 * ACK and checkpoint: lock the jobs, decide each with transitions.ts behind the claim
 * fence (checkClaim), write every acknowledged change with one UPDATE per shard.
 * Items are decided in order, so a job named twice in a batch sees the first change.
 * An ACK (`kind` "ack") of a workflow job's run is answered "workflow" and not decided.
 */
async function applyToRunning<T extends { id: string; claimToken: string }>(
  ctx: MysqlContext,
  items: T[],
  now: number,
  decide: (job: JobRecord, item: T) => JobPatch,
  kind: "ack" | "checkpoint",
  fast?: (item: T) => JobPatch | undefined,
): Promise<AckResultRecord[]> {
  const results: AckResultRecord[] = items.map(() => ({ outcome: "not_found" }));
  await Promise.all(
    [...(await ctx.router.groupByShard(items, (i) => partitionOfId(i.id)))].map(async ([shard, keyed]) => {
      if (fast && (await applyByToken(shard, keyed, fast))) {
        for (const { index } of keyed) results[index] = { outcome: "acknowledged" };
        return;
      }
      await shard.transaction(async (c) => {
        const ids = [...new Set(keyed.map((k) => k.item.id))];
        const jobs = new Map(
          (await select<JobRow>(c, sql.selectJobsMetaLocked(ids.length), ids)).map((row) => [row.id, toRecord(row)]),
        );
        const tokens = new Map([...jobs.values()].map((j) => [j.id, j.claimToken]));
        const patches = new Map<string, JobPatch>();
        for (const { index, item } of keyed) {
          const job = jobs.get(item.id);
          const outcome = transitions.checkClaim(job, item.claimToken);
          if (outcome !== "acknowledged" || !job) {
            results[index] = { outcome };
            continue;
          }
          if (kind === "ack" && job.workflow !== undefined) {
            results[index] = { outcome: "workflow", workflow: job.workflow };
            continue;
          }
          const patch = decide(job, item);
          Object.assign(job, patch);
          patches.set(job.id, { ...patches.get(job.id), ...patch });
          results[index] = { outcome, pendingAt: job.state === "pending" ? job.runAfter : undefined };
        }
        if (patches.size === 0) return;
        const changed = [...patches].map(([id, patch]) => ({ id, patch }));
        // The statement re-checks what was decided under the lock: still running, same token.
        const fence = {
          sql: `state = 'running' AND (id, claim_token) IN (${changed.map(() => "(?, ?)").join(", ")})`,
          params: changed.flatMap((c) => [c.id, tokens.get(c.id)!]),
        };
        const statement = patchManyStatement(changed, fence);
        await run(c, statement.sql, statement.params);
        // A checkpoint that keeps the job running moves its deadline: the sweep must look then.
        await addClaimChecks(
          c,
          changed.map(({ id, patch }) => ({ id, claimExpiresAt: patch.claimExpiresAt ?? 0 })),
        );
        // Jobs that ended let the next job of their ordering key go, in this transaction.
        const promotedBy = await leaveSequences(
          c,
          [...jobs.values()].filter((j) => patches.has(j.id) && endedWithKey(j)),
          now,
        );
        for (const { index, item } of keyed) {
          const promotedAt = promotedBy.get(item.id);
          if (promotedAt !== undefined && results[index]!.outcome === "acknowledged")
            results[index]!.promotedAt = promotedAt;
        }
      });
    }),
  );
  // Jobs back to pending (retries, checkpoints) and promoted ones may sit behind a claim's cursor.
  results.forEach((r, i) => {
    if (r.pendingAt !== undefined) ctx.held.noteQueued(items[i]!.id, undefined, r.pendingAt);
    if (r.promotedAt !== undefined) ctx.held.noteQueued(items[i]!.id, undefined, r.promotedAt);
  });
  return results;
}

/**
 * The ACK fast path on one shard: when every item has a non-empty token, a distinct id and
 * a job-independent patch (`fast`), one UPDATE per (claim token, patch) whose WHERE is the
 * whole fence (running, that token, no ordering key to promote). True when every item was
 * acknowledged; otherwise nothing was written (rolled back) and the caller decides exactly.
 */
async function applyByToken<T extends { id: string; claimToken: string }>(
  shard: Shard,
  keyed: Array<Located<T>>,
  fast: (item: T) => JobPatch | undefined,
): Promise<boolean> {
  const groups = new Map<
    string,
    { token: string; patch: JobPatch; set: { sql: string; params: Param[] }; ids: string[] }
  >();
  // `fast` usually returns one patch object for every item: its SET clause and key part are made once.
  const clauses = new Map<JobPatch, { set: { sql: string; params: Param[] }; key: string }>();
  const seen = new Set<string>();
  for (const { item } of keyed) {
    const patch = fast(item);
    if (!patch || item.claimToken === "" || seen.has(item.id)) return false;
    seen.add(item.id);
    let clause = clauses.get(patch);
    if (!clause) {
      const set = setClause(patch);
      clauses.set(patch, (clause = { set, key: `${set.sql}\u0000${set.params.join("\u0000")}` }));
    }
    const { set } = clause;
    const key = `${item.claimToken}\u0000${clause.key}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { token: item.claimToken, patch, set, ids: [] }));
    group.ids.push(item.id);
  }
  const acked = await wholeOrNothing(shard, async (c) => {
    for (const g of groups.values()) {
      const n = await run(c, sql.ackGroup(g.set.sql, g.ids.length), [...g.set.params, ...g.ids, g.token]);
      if (n !== g.ids.length) throw new NotWhole();
      // Only a patch that gives the jobs a deadline needs checks (succeed, the usual one, does not).
      const deadline = g.patch.claimExpiresAt ?? 0;
      if (deadline > 0)
        await addClaimChecks(
          c,
          g.ids.map((id) => ({ id, claimExpiresAt: deadline })),
        );
    }
    return true;
  });
  return acked === true;
}

/** A job with an ordering key that has just ended leaves its key's sequence. */
function endedWithKey(job: JobRecord): boolean {
  return job.orderingKey !== "" && transitions.isTerminal(job.state);
}
