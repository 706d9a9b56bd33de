/**
 * Enqueue in memory: all or nothing (every queue is checked first), idempotency keys
 * resolved against live jobs, and a job with an ordering key joins its key's sequence,
 * waiting behind a job of the key that has not ended.
 */
import { queueNotFound } from "../../domain/errors.js";
import type { JobRecord, NewJob } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { MemoryState } from "./memory-state.js";
import type { Slot } from "./queue-data.js";

export async function jobInsertMany(state: MemoryState, p: { jobs: NewJob[]; now: number }): Promise<string[]> {
  return insertJobs(state, p);
}

/** The insert as one synchronous step (workflows.ts makes it part of a larger one). */
export function insertJobs(state: MemoryState, p: { jobs: NewJob[]; now: number }): string[] {
  // Check every queue first: a batch is all or nothing.
  for (const job of p.jobs) if (!state.queues.has(job.queue)) throw queueNotFound(job.queue);
  return p.jobs.map((spec) => {
    const q = state.queues.get(spec.queue)!;
    if (spec.idempotencyKey !== "") {
      const existing = q.idempotency.get(spec.idempotencyKey);
      if (existing !== undefined && state.jobs.has(existing)) return existing;
      q.idempotency.set(spec.idempotencyKey, spec.id);
    }
    const job: JobRecord = {
      ...spec,
      state: "pending",
      attemptsRemaining: spec.attemptsAllowed,
      attempt: 0,
      updatedAt: p.now,
      finishedAt: 0,
      claimToken: "",
      claimExpiresAt: 0,
      retryDelayMs: 0,
      bufferEpoch: 0,
      seq: ++state.seq,
    };
    const slot: Slot = { job, gen: 0, keyPos: 0 };
    if (job.orderingKey !== "") {
      job.state = transitions.arrivalState(q.partitions[job.partition]!.sequences.join(job.orderingKey, slot, job.seq));
    }
    state.jobs.set(job.id, slot);
    q.jobs.add(job.id);
    q.counts[job.state]++;
    state.index(slot);
    return job.id;
  });
}
