/**
 * Telling the broker (or the cluster router) that jobs are, or will be, due: after an
 * enqueue, after acks and checkpoints that sent jobs back to pending or let the next job
 * of an ordering key go, and after the claim-timeout sweep. Waiters wake on these, not on
 * a tick.
 */
import { parseJobId } from "../domain/job-id.js";
import type { JobRecord, NewJob } from "../domain/job-record.js";
import type { OutcomeResult } from "../store/store.js";
import type { Dispatch } from "./dispatch.js";

/** One announcement per partition: its earliest due time and best priority. */
export function announceInserted(broker: Dispatch, jobs: NewJob[]): void {
  const best = new Map<string, { queue: string; partition: number; dueAt: number; priority: number }>();
  for (const job of jobs) {
    const key = `${job.queue}/${job.partition}`;
    const b = best.get(key);
    if (!b) best.set(key, { queue: job.queue, partition: job.partition, dueAt: job.runAfter, priority: job.priority });
    else {
      b.dueAt = Math.min(b.dueAt, job.runAfter);
      b.priority = Math.min(b.priority, job.priority);
    }
  }
  for (const b of best.values()) broker.notify(b.queue, b.partition, b.dueAt, b.priority);
}

/** Jobs that went back to pending, and jobs promoted behind an ordering key's finished head. */
export function announceOutcomes(broker: Dispatch, ids: string[], results: OutcomeResult[]): void {
  results.forEach((r, i) => {
    if (r.pendingAt === undefined && r.promotedAt === undefined) return;
    const where = parseJobId(ids[i]!);
    if (!where) return;
    if (r.pendingAt !== undefined) broker.notify(where.queue, where.partition, r.pendingAt);
    if (r.promotedAt !== undefined) broker.notify(where.queue, where.partition, r.promotedAt);
  });
}

/** After the claim-timeout sweep: jobs back to pending are due again; a job failed for good lets its ordering key's next job go. */
export function announceExpired(broker: Dispatch, jobs: JobRecord[], now: number): void {
  for (const job of jobs) {
    if (job.state === "pending") broker.notify(job.queue, job.partition, job.runAfter, job.priority);
    else if (job.state === "failed" && job.orderingKey !== "") broker.notify(job.queue, job.partition, now);
  }
}
