/**
 * Group commit for small Enqueue calls: while one store write of a queue's small calls is
 * in flight, the small calls for that queue that arrive meanwhile wait, and when it ends
 * they go to the store together, as one jobInsertMany. No timer: a call that finds no
 * write in flight is written at once, so a lone call waits for nothing, and the groups
 * grow only as fast as the calls outpace the store (on Redis, one script call and one
 * round trip for the group instead of one per call: issue 28's 2,000 single-job Enqueue
 * calls a second).
 *
 * Only calls whose jobs all go to one queue are grouped, by that queue: a group then
 * fails as a whole only for a reason each of its calls would have met alone (the queue
 * is gone, the store is down), and nothing is ever written twice. What a group means for
 * its calls is what the same calls written one after another would: the store resolves
 * idempotency keys and ordering keys within a batch as across batches (Store.jobInsertMany).
 * Calls of more than `groupedCallMaxJobs` jobs are batches already and go straight to the
 * store, so that a producer's large batches keep several writes in flight.
 */
import type { NewJob } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import type { Store } from "../store/store.js";

/** Calls of at most this many jobs are grouped; larger ones are written on their own. */
export const groupedCallMaxJobs = 64;

interface WaitingCall {
  jobs: NewJob[];
  now: number;
  resolve(ids: string[]): void;
  reject(err: unknown): void;
}

export class InsertGroups {
  /**
   * Queues with a grouped write in flight, and the calls waiting for it to end. A plain
   * object, not a Map: an entry comes and goes with every write (domain/arrival-list.ts
   * says why a Map that churns costs the garbage collector).
   */
  private readonly queues: Record<string, WaitingCall[]> = Object.create(null);

  constructor(private readonly store: Pick<Store, "jobInsertMany">) {}

  /** Store.jobInsertMany for one Enqueue call's jobs, grouped with other small calls for its queue. */
  insert(jobs: NewJob[], now: number): Promise<string[]> {
    const queue = jobs[0]?.queue;
    if (queue === undefined || jobs.length > groupedCallMaxJobs || jobs.some((j) => j.queue !== queue))
      return this.store.jobInsertMany({ jobs, now });
    return new Promise((resolve, reject) => {
      const call = { jobs, now, resolve, reject };
      const waiting = this.queues[queue];
      if (waiting) waiting.push(call);
      else {
        this.queues[queue] = [];
        this.write(queue, [call]);
      }
    });
  }

  private write(queue: string, group: WaitingCall[]): void {
    const jobs = group.length === 1 ? group[0]!.jobs : group.flatMap((c) => c.jobs);
    // The latest clock reading of the group: every job was made at or before it.
    const now = Math.max(...group.map((c) => c.now));
    this.store.jobInsertMany({ jobs, now }).then(
      (ids) => {
        let at = 0;
        for (const call of group) {
          call.resolve(ids.slice(at, at + call.jobs.length));
          at += call.jobs.length;
        }
        this.next(queue);
      },
      (err: unknown) => {
        for (const call of group) call.reject(err);
        this.next(queue);
      },
    );
  }

  /** The write for `queue` ended: the calls that waited for it go as the next group. */
  private next(queue: string): void {
    const waiting = this.queues[queue]!;
    if (waiting.length === 0) {
      delete this.queues[queue];
      return;
    }
    // At most an Enqueue batch's worth of jobs per write; the rest wait for the next one.
    let jobs = 0;
    let take = 0;
    while (take < waiting.length && (take === 0 || jobs + waiting[take]!.jobs.length <= limits.enqueueBatchMax))
      jobs += waiting[take++]!.jobs.length;
    this.write(queue, waiting.splice(0, take));
  }
}
