/**
 * Group commit for small Enqueue calls (domain/group-commit.ts), one line per queue: while
 * one store write of a queue's small calls is in flight, the small calls for that queue
 * that arrive meanwhile wait, and when it ends they go to the store together, as one
 * jobInsertMany (on Redis, one script call and one round trip for the group instead of
 * one per call: issue 28's 2,000 single-job Enqueue calls a second).
 *
 * Only calls whose jobs all go to one queue are grouped, by that queue: a group then
 * fails as a whole only for a reason each of its calls would have met alone (the queue
 * is gone, the store is down), and nothing is ever written twice. What a group means for
 * its calls is what the same calls written one after another would: the store resolves
 * idempotency keys and ordering keys within a batch as across batches (Store.jobInsertMany).
 * Calls of more than `groupedCallMaxJobs` jobs are batches already and go straight to the
 * store, so that a producer's large batches keep several writes in flight.
 */
import { GroupCommit } from "../domain/group-commit.js";
import type { NewJob } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import type { Store } from "../store/store.js";

/** Calls of at most this many jobs are grouped; larger ones are written on their own. */
export const groupedCallMaxJobs = 64;

interface Call {
  jobs: NewJob[];
  now: number;
}

export class InsertGroups {
  /** One line per queue; at most an Enqueue batch's worth of jobs per write. */
  private readonly groups: GroupCommit<Call, string[]>;

  constructor(private readonly store: Pick<Store, "jobInsertMany">) {
    this.groups = new GroupCommit({
      write: (calls) => this.write(calls),
      maxCalls: limits.enqueueBatchMax,
      maxWeight: limits.enqueueBatchMax,
      weigh: (call) => call.jobs.length,
    });
  }

  /** Store.jobInsertMany for one Enqueue call's jobs, grouped with other small calls for its queue. */
  insert(jobs: NewJob[], now: number): Promise<string[]> {
    const queue = jobs[0]?.queue;
    if (queue === undefined || jobs.length > groupedCallMaxJobs || jobs.some((j) => j.queue !== queue))
      return this.store.jobInsertMany({ jobs, now });
    return this.groups.submit(queue, { jobs, now });
  }

  private async write(group: Call[]): Promise<string[][]> {
    const jobs = group.length === 1 ? group[0]!.jobs : group.flatMap((c) => c.jobs);
    // The latest clock reading of the group: every job was made at or before it.
    const now = Math.max(...group.map((c) => c.now));
    const ids = await this.store.jobInsertMany({ jobs, now });
    let at = 0;
    return group.map((call) => ids.slice(at, (at += call.jobs.length)));
  }
}
