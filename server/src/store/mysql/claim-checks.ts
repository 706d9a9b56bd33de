/**
 * Claim checks (schema 6, docs/mysql.md "Claim checks"): the ledger the claim-timeout sweep
 * reads instead of an index on claim_expires_at. Each write that gives running jobs a claim
 * deadline (a start, a checkpoint that extends the claim) inserts, in its transaction, one
 * row per deadline: "at due_at, look at these jobs". A job's row stays the truth: the sweep
 * expires a listed job only if it is still running past its own deadline, so checks left
 * behind by an ACK, a retry or an extension find nothing and are simply deleted. An ACK
 * never touches the ledger, and no index entry of the job moves for its claim.
 *
 * The invariant that makes this complete: whenever a job is running with deadline D, the
 * write that set D added a check due at D that lists it, and only a sweep that has looked
 * at the job under a lock deletes that check.
 */
import * as sql from "./queries.js";
import { type Conn, type Param, run, select } from "./shard.js";

/** Most checks one sweep transaction reads (each lists at least one job). */
const CHECKS_PER_SWEEP = 100;
/**
 * The sweep looks at claim checks no more often than this: there is one check per hand-out,
 * hundreds a second under load, so checks due within this gap are taken together, and a
 * claim may run out up to this much late.
 */
const CLAIM_CHECK_GAP_MS = 100;

/** Records the deadlines of jobs just made (or kept) running: one check per distinct deadline. */
export async function addClaimChecks(c: Conn, jobs: Iterable<{ id: string; claimExpiresAt: number }>): Promise<void> {
  const byDeadline = new Map<number, string[]>();
  for (const job of jobs) {
    if (job.claimExpiresAt <= 0) continue;
    const ids = byDeadline.get(job.claimExpiresAt);
    if (ids) ids.push(job.id);
    else byDeadline.set(job.claimExpiresAt, [job.id]);
  }
  if (byDeadline.size === 0) return;
  const params: Param[] = [...byDeadline].flatMap(([dueAt, ids]) => [dueAt, ids.join(" ")]);
  await run(c, sql.claimChecksInsert(byDeadline.size), params);
}

/**
 * Inside a transaction: locks the due checks, oldest first, and takes the jobs they list,
 * at most `room` of them. Checks taken whole are deleted; one cut by `room` keeps the jobs
 * it did not give. Returns the distinct job ids to look at (under the same transaction).
 */
export async function takeDueChecks(c: Conn, now: number, room: number): Promise<string[]> {
  const checks = await select<{ id: number | string; job_ids: string }>(c, sql.CLAIM_CHECKS_DUE, [
    now,
    Math.min(room, CHECKS_PER_SWEEP),
  ]);
  const taken: Array<number | string> = [];
  const ids = new Set<string>();
  let given = 0;
  for (const check of checks) {
    const listed = check.job_ids.split(" ");
    if (given + listed.length > room) {
      const cut = room - given;
      if (cut > 0) {
        for (const id of listed.slice(0, cut)) ids.add(id);
        await run(c, sql.CLAIM_CHECK_KEEP, [listed.slice(cut).join(" "), check.id]);
      }
      break;
    }
    for (const id of listed) ids.add(id);
    given += listed.length;
    taken.push(check.id);
  }
  if (taken.length > 0) await run(c, sql.claimChecksDelete(taken.length), taken);
  return [...ids];
}

/**
 * When the sweep should look again: the next check, no sooner than the gap; or the time of a
 * check still due, which another sweep holds (it was skipped), so the caller can tell and
 * look again at once. Undefined: no check at all.
 */
export async function nextClaimCheck(c: Conn, now: number): Promise<number | undefined> {
  const [row] = await select<{ next_at: number | string | null }>(c, sql.NEXT_CLAIM_CHECK);
  if (row?.next_at == null) return undefined;
  const next = Number(row.next_at);
  return next <= now ? next : Math.max(next, now + CLAIM_CHECK_GAP_MS);
}
