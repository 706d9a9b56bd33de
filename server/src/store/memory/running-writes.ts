/**
 * The writes on running jobs in memory: the claim-timeout sweep (jobClaimExpire, over the
 * running index by claim expiry), and ACK and checkpoint, each fenced by its claim token
 * (transitions.checkClaim) and applied job by job in the batch's order.
 */
import type { JobRecord } from "../../domain/job-record.js";
import type { JobPatch } from "../../domain/transitions.js";
import * as transitions from "../../domain/transitions.js";
import type { AckResultRecord, OutcomeResult } from "../store.js";
import type { MemoryState } from "./memory-state.js";

export async function jobClaimExpire(
  state: MemoryState,
  p: { now: number; limit: number },
): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
  const expired: JobRecord[] = [];
  for (;;) {
    const top = state.running.peek();
    if (!top) break;
    const slot = state.liveSlot(top, "running");
    if (!slot || slot.job.claimExpiresAt !== top.at) {
      state.running.pop();
      continue;
    }
    if (top.at > p.now || expired.length >= p.limit) break;
    state.running.pop();
    state.apply(slot, transitions.expireClaim(slot.job, p.now));
    expired.push({ ...slot.job });
  }
  return { expired, nextExpiryAt: state.running.peek()?.at };
}

export async function jobCheckpointMany(
  state: MemoryState,
  p: { items: Array<transitions.CheckpointInput & { id: string; claimToken: string }>; now: number },
): Promise<OutcomeResult[]> {
  return p.items.map((item) =>
    applyToRunning(state, item.id, item.claimToken, (job) => transitions.checkpoint(job, item, p.now)),
  );
}

export async function jobCompleteMany(
  state: MemoryState,
  p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number },
): Promise<AckResultRecord[]> {
  return p.items.map((item) => ackRunning(state, item, (job) => transitions.succeed(job, item.customStatus, p.now)));
}

export async function jobFailMany(
  state: MemoryState,
  p: { items: Array<transitions.FailureInput & { id: string; claimToken: string }>; now: number },
): Promise<AckResultRecord[]> {
  return p.items.map((item) => ackRunning(state, item, (job) => transitions.fail(job, item, p.now)));
}

/** An ACK item: applied, unless its job is a run of a workflow job (then left for Store.workflows.instanceApply). */
function ackRunning(
  state: MemoryState,
  item: { id: string; claimToken: string },
  decide: (job: JobRecord) => JobPatch,
): AckResultRecord {
  const job = state.jobs.get(item.id)?.job;
  if (job?.workflow !== undefined && transitions.checkClaim(job, item.claimToken) === "acknowledged") {
    return { outcome: "workflow", workflow: job.workflow };
  }
  return applyToRunning(state, item.id, item.claimToken, decide);
}

export function applyToRunning(
  state: MemoryState,
  id: string,
  claimToken: string,
  decide: (job: JobRecord) => JobPatch,
): OutcomeResult {
  const slot = state.jobs.get(id);
  const outcome = transitions.checkClaim(slot?.job, claimToken);
  if (outcome !== "acknowledged" || !slot) return { outcome };
  const promoted = state.apply(slot, decide(slot.job));
  const result: OutcomeResult = { outcome, pendingAt: slot.job.state === "pending" ? slot.job.runAfter : undefined };
  if (promoted) result.promotedAt = promoted.job.runAfter;
  return result;
}
