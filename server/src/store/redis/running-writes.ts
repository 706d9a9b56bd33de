/**
 * The writes on running jobs on Redis: ACK and checkpoint (complete, fail, checkpoint), one
 * script call per shard each, every item fenced by its claim token inside the script; and
 * the claim-timeout sweep (jobClaimExpire), which reads each shard's claim checks.
 * jobCompleteMany is the hottest call of all: its items travel in runs that share a token
 * and a status (batch-args.ts). An ACK of a workflow job's run changes nothing and answers
 * "workflow" with the job's context (Store.workflows.instanceApply applies it: workflows.ts).
 */
import type { JobRecord } from "../../domain/job-record.js";
import type { CheckpointInput, FailureInput } from "../../domain/transitions.js";
import { partitionOfId } from "../shard-router.js";
import type { AckResultRecord, OutcomeResult } from "../store.js";
import { joinable, runsOf } from "./batch-args.js";
import { decodeAckOutcomes, decodeJobs, decodeOutcomes, text } from "./codec.js";
import type { RedisContext } from "./redis-context.js";
import { runScript, type ScriptArg, type ScriptName } from "./scripts.js";

export async function jobClaimExpire(
  ctx: RedisContext,
  p: { now: number; limit: number },
): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
  // Shards one after another, sharing the limit; the start rotates so none starves.
  const expired: JobRecord[] = [];
  let nextExpiryAt: number | undefined;
  const start = ctx.sweepStart++ % ctx.shards.length;
  for (let k = 0; k < ctx.shards.length && expired.length < p.limit; k++) {
    const shard = ctx.shards[(start + k) % ctx.shards.length]!;
    const on = ctx.keysOn(shard);
    const [next, ...records] = (await runScript(
      shard,
      "job_claim_expire",
      [on.claimChecks()],
      [on.prefix, p.now, p.limit - expired.length],
    )) as unknown[];
    expired.push(...decodeJobs(records));
    const at = text(next);
    if (at !== "" && (nextExpiryAt === undefined || Number(at) < nextExpiryAt)) nextExpiryAt = Number(at);
  }
  return { expired, nextExpiryAt };
}

export async function jobCheckpointMany(
  ctx: RedisContext,
  p: { items: Array<CheckpointInput & { id: string; claimToken: string }>; now: number },
): Promise<OutcomeResult[]> {
  return acknowledge(ctx, "job_checkpoint_many", p.items, p.now, decodeOutcomes, (items) =>
    items.flatMap((c) => [
      c.id,
      c.claimToken,
      c.claimExpiresAt,
      c.newBody === undefined ? "0" : "1",
      c.newBody ?? "",
      c.moveToPending ? "1" : "0",
      c.runAfter,
      c.attemptsAllowed,
      c.customStatus,
    ]),
  );
}

export async function jobCompleteMany(
  ctx: RedisContext,
  p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number },
): Promise<AckResultRecord[]> {
  // The hot ACK: per run of items sharing a token and status, those two and the ids joined.
  return acknowledge(ctx, "job_complete_many", p.items, p.now, decodeAckOutcomes, (items) =>
    runsOf(items, (a, b) => a.claimToken === b.claimToken && a.customStatus === b.customStatus).flatMap((run) => [
      run[0]!.claimToken,
      run[0]!.customStatus,
      run.map((c) => c.id).join(" "),
    ]),
  );
}

export async function jobFailMany(
  ctx: RedisContext,
  p: { items: Array<FailureInput & { id: string; claimToken: string }>; now: number },
): Promise<AckResultRecord[]> {
  return acknowledge(ctx, "job_fail_many", p.items, p.now, decodeAckOutcomes, (items) =>
    items.flatMap((f) => [f.id, f.claimToken, f.customStatus, f.retryDelayMs ?? "", f.noRetry ? "1" : "0"]),
  );
}

/**
 * ACK-style batches: one script call per shard, its items encoded by `encode` (after the
 * prefix and `now`), one outcome back per item (`decode` reads the reply). Ids that name
 * no partition, or that cannot travel in a space-joined list, are not_found without being sent.
 */
async function acknowledge<T extends { id: string }, R extends AckResultRecord>(
  ctx: RedisContext,
  name: ScriptName,
  items: T[],
  now: number,
  decode: (reply: unknown) => R[],
  encode: (items: T[]) => ScriptArg[],
): Promise<R[]> {
  const results = items.map(() => ({ outcome: "not_found" }) as R);
  await Promise.all(
    [...(await ctx.router.groupByShard(items, (i) => partitionOfId(i.id)))].map(async ([shard, located]) => {
      const sent = located.filter(({ item }) => joinable(item.id));
      if (sent.length === 0) return;
      const on = ctx.keysOn(shard);
      const args: ScriptArg[] = [on.prefix, now, ...encode(sent.map(({ item }) => item))];
      const outcomes = decode(await runScript(shard, name, [on.claimChecks()], args));
      for (const [k, outcome] of outcomes.entries()) results[sent[k]!.index] = outcome;
    }),
  );
  return results;
}
