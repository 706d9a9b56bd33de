/**
 * The broker's path on Redis, from a partition's due jobs to running ones, one script call
 * each: the claim (job_claim_many.lua: pending to buffered under the lease epoch), the
 * next-due lookup, the release of buffered jobs, and the start (job_start_many.lua:
 * buffered to running). The claim and the start are the hot path: their arguments and
 * replies are shaped to cost Redis as little per job as possible (see the scripts).
 */
import type { JobRecord } from "../../domain/job-record.js";
import { claimIntoBuffer, type HandOutPlan, handOut } from "../../domain/transitions.js";
import type { Store } from "../store.js";
import { joinable, runsOf } from "./batch-args.js";
import { decodeStored, text } from "./codec.js";
import type { Keys } from "./keys.js";
import { type RedisContext, runOnPartition } from "./redis-context.js";
import type { ScriptArg } from "./scripts.js";

export async function jobClaimMany(ctx: RedisContext, p: Parameters<Store["jobClaimMany"]>[0]): Promise<JobRecord[]> {
  const start = p.start;
  const keys = (on: Keys) => [
    on.lease(p.queue, p.partition),
    on.counters(p.queue, p.partition),
    ...(start ? [on.claimChecks()] : []),
  ];
  const args: ScriptArg[] = [p.queue, p.partition, p.epoch, p.limit, p.now, p.maxBytes ?? ""];
  if (start) args.push(start.claimToken, start.claimExpiresAt, start.retryDelayMs, start.max, start.maxBytes);
  const reply = (await runOnPartition(ctx, p.queue, p.partition, "job_claim_many", keys, args)) as Array<
    Buffer | number
  >;
  // With a start, the count handed out comes last (after the ids, even when none was claimed).
  const handedOut = start && reply.length > 0 ? (reply.pop() as number) : 0;
  if (reply.length < 2) return [];
  // The ids, then each job as it was read (pending): the claim's patch applies to our copy as it did to the store's.
  const ids = (reply[0] as Buffer).toString("latin1").split(" ");
  const patch = claimIntoBuffer(p.epoch);
  const where = { queue: p.queue, partition: p.partition };
  return ids.map((id, i) => {
    const job = Object.assign(decodeStored(id, reply[i + 1] as Buffer, 0, false, where), patch);
    // The first `handedOut` were handed out (store/claim-start.ts's rule): handOut applies to our copy too.
    return i < handedOut ? Object.assign(job, handOut(job, { id, ...start! }, p.now)) : job;
  });
}

export async function jobNextDueAt(
  ctx: RedisContext,
  p: { queue: string; partition: number },
): Promise<number | undefined> {
  const reply = await runOnPartition(
    ctx,
    p.queue,
    p.partition,
    "job_next_due_at",
    (on) => [on.counters(p.queue, p.partition)],
    [p.queue, p.partition],
  );
  return reply === null ? undefined : Number(text(reply));
}

export async function jobReleaseBuffered(
  ctx: RedisContext,
  p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number },
): Promise<number> {
  if (p.ids !== undefined && p.ids.length === 0) return 0;
  const args = [p.queue, p.partition, p.epoch ?? "", p.belowEpoch ?? "", ...(p.ids ?? [])];
  return (await runOnPartition(
    ctx,
    p.queue,
    p.partition,
    "job_release_buffered",
    (on) => [on.buffered(p.queue, p.partition)],
    args,
  )) as number;
}

export async function jobStartMany(
  ctx: RedisContext,
  p: { queue: string; partition: number; epoch: number; plans: HandOutPlan[]; now: number },
): Promise<string[]> {
  // One script call per run of plans sharing a claim token and expiry (the broker's
  // hand-out batches are one run): those two travel once, not once per job.
  const started: string[] = [];
  // A token too long for its slot (limits.claimTokenMaxBytes) fails the script at its
  // first job, before any write: a run shares one token.
  for (const run of runsOf(
    p.plans.filter((plan) => joinable(plan.id)), // (the rest name no job: not started)
    (a, b) => a.claimToken === b.claimToken && a.claimExpiresAt === b.claimExpiresAt,
  )) {
    const args: ScriptArg[] = [p.queue, p.partition, p.epoch, p.now, run[0]!.claimToken, run[0]!.claimExpiresAt];
    // The ids travel joined, per run of equal retry delays (a batch's are mostly one).
    const delays = runsOf(run, (a, b) => a.retryDelayMs === b.retryDelayMs);
    for (const plans of delays) args.push(plans[0]!.retryDelayMs, plans.map((plan) => plan.id).join(" "));
    const flags = (
      (await runOnPartition(
        ctx,
        p.queue,
        p.partition,
        "job_start_many",
        (on) => [on.lease(p.queue, p.partition), on.claimChecks()],
        args,
      )) as Buffer
    ).toString("latin1");
    for (const [i, plan] of run.entries()) if (flags[i] === "1") started.push(plan.id);
  }
  return started;
}
