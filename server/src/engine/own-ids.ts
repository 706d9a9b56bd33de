import { couldBeClaimToken, parseJobId } from "../domain/job-id.js";
import type { OutcomeResult } from "../store/store.js";
import type { JobOutcome } from "./inputs.js";

/**
 * Splits a batch into the items whose job id belongs to `queue` (sent to the store) and
 * the rest, which are answered not_found (or stale_claim, for a claim token no server
 * issues: the store is not asked to compare it); merge puts the store's answers back in
 * the batch's order.
 */
export function ownIds<T extends { jobId: string; claimToken?: string }>(queue: string, items: T[]) {
  const mine: T[] = [];
  const positions: number[] = [];
  const unasked: JobOutcome[] = items.map((item) => ({ jobId: item.jobId, outcome: "not_found" }));
  items.forEach((item, i) => {
    if (parseJobId(item.jobId)?.queue !== queue) return;
    if (item.claimToken !== undefined && !couldBeClaimToken(item.claimToken)) {
      unasked[i]!.outcome = "stale_claim";
      return;
    }
    mine.push(item);
    positions.push(i);
  });
  return {
    mine,
    merge(results: OutcomeResult[]): JobOutcome[] {
      const outcomes = unasked;
      results.forEach((r, k) => {
        outcomes[positions[k]!]!.outcome = r.outcome;
      });
      return outcomes;
    },
  };
}
