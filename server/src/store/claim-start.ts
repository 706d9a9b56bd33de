/**
 * Claiming and handing out in one step (Store.jobClaimMany with `start`): which of the
 * claimed jobs go out at once, and the claim-then-start every store but Redis does it with.
 *
 * The rule: the leading claimed jobs, in the claim's order (best first), that are on their
 * first attempt (a retry's delay after the hand-out depends on its attempt, which only the
 * claim reveals), up to `max` jobs and `maxBytes` of bodies (the first whatever its size).
 * The first job on a later attempt ends the run, so nothing handed out is worse than a job
 * left buffered. The Redis claim (lua/job_claim_many.lua) applies the same rule in Lua.
 */
import { byteBudget } from "../domain/byte-budget.js";
import type { JobRecord } from "../domain/job-record.js";
import { type HandOutPlan, handOut } from "../domain/transitions.js";
import type { ClaimStart, Store } from "./store.js";

/** How many of `claimed` (in claim order) the claim hands out. */
export function leadingFirstAttempts(claimed: Array<Pick<JobRecord, "attempt" | "body">>, start: ClaimStart): number {
  const fits = byteBudget(start.maxBytes);
  let n = 0;
  while (n < claimed.length && n < start.max && claimed[n]!.attempt === 0 && fits(claimed[n]!.body.length)) n++;
  return n;
}

/** The claim, then jobStartMany for the jobs it hands out: the same outcome as one step, in two calls. */
export async function claimThenStart(
  store: Pick<Store, "jobClaimMany" | "jobStartMany">,
  p: Parameters<Store["jobClaimMany"]>[0] & { start: ClaimStart },
): Promise<JobRecord[]> {
  const { start, ...claim } = p;
  const claimed = await store.jobClaimMany(claim);
  const n = leadingFirstAttempts(claimed, start);
  if (n === 0) return claimed;
  const plans: HandOutPlan[] = claimed.slice(0, n).map((job) => ({
    id: job.id,
    claimToken: start.claimToken,
    claimExpiresAt: start.claimExpiresAt,
    retryDelayMs: start.retryDelayMs,
  }));
  const started = new Set(
    await store.jobStartMany({ queue: p.queue, partition: p.partition, epoch: p.epoch, plans, now: p.now }),
  );
  return claimed.map((job, i) => (i < n && started.has(job.id) ? { ...job, ...handOut(job, plans[i]!, p.now) } : job));
}
