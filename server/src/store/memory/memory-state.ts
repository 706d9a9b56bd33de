/**
 * The memory store's state and the primitives that keep its indexes true: every job change
 * goes through apply() (a transition's patch, then the job re-indexed for its new state and,
 * when it ends, out of its ordering key's sequence) or remove(). memory-store.ts makes one
 * per store; each Store method hands it to the module function of its concern
 * (../delegating-store.ts).
 */

import { type JobFilter, matchesFilter } from "../../domain/job-filter.js";
import type { TokenRecord } from "../../domain/tokens.js";

/** Jobs a matching walk examines, and body bytes it tests, before it lets other work run. */
const MATCH_YIELD_JOBS = 1000;
const MATCH_YIELD_BYTES = 1024 * 1024;

import type { StoredState } from "../../domain/job-record.js";
import type { JobPatch } from "../../domain/transitions.js";
import * as transitions from "../../domain/transitions.js";
import type { BrokerEntry, Lease } from "../store.js";
import { OrderedIndex } from "./ordered-index.js";
import { byTimeThenSeq, type IndexEntry, type QueueData, type Slot } from "./queue-data.js";

export class MemoryState {
  readonly queues = new Map<string, QueueData>();
  readonly jobs = new Map<string, Slot>();
  readonly running = new OrderedIndex<IndexEntry>(byTimeThenSeq);
  private runningCount = 0;
  readonly leases = new Map<string, Lease>();
  readonly epochs = new Map<string, number>();
  readonly brokers = new Map<string, BrokerEntry>();
  readonly tokens = new Map<string, TokenRecord>();
  seq = 0;

  /**
   * Applies a transition's patch and re-indexes the job for its new state. A job that
   * ended leaves its ordering key's sequence, and the key's next job is promoted (and
   * returned, so acks can announce it). Every patch that ends a job sets updatedAt (the
   * transition's time), which the promotion uses as now.
   */
  apply(slot: Slot, patch: JobPatch): Slot | undefined {
    const q = this.queues.get(slot.job.queue)!;
    const before = slot.job.state;
    Object.assign(slot.job, patch);
    slot.gen++;
    const after = slot.job.state;
    q.counts[before]--;
    q.counts[after]++;
    if (before === "running") this.runningCount--;
    if (before === "buffered" && after !== "buffered") q.partitions[slot.job.partition]!.buffered.delete(slot.job.id);
    if (before === "waiting" && after !== "waiting") q.partitions[slot.job.partition]!.waiting.delete(slot.job.id);
    this.index(slot);
    return slot.keyPos !== 0 && transitions.isTerminal(after)
      ? this.leaveSequence(slot, slot.job.updatedAt)
      : undefined;
  }

  /** Takes a job out of its ordering key's sequence; promotes the key's new head if it was waiting. */
  private leaveSequence(slot: Slot, now: number): Slot | undefined {
    slot.keyPos = 0;
    const head = this.queues.get(slot.job.queue)!.partitions[slot.job.partition]!.sequences.head(slot.job.orderingKey);
    if (head?.job.state !== "waiting") return undefined;
    this.apply(head, transitions.promote(now));
    return head;
  }

  index(slot: Slot): void {
    const job = slot.job;
    const q = this.queues.get(job.queue)!;
    const partition = q.partitions[job.partition]!;
    switch (job.state) {
      case "pending":
        partition.pendingHeap(job.priority).push({ at: job.runAfter, seq: job.seq, slot, gen: slot.gen });
        break;
      case "waiting":
        partition.waiting.add(job.id);
        break;
      case "buffered":
        partition.buffered.add(job.id);
        break;
      case "running":
        this.runningCount++;
        this.running.push({ at: job.claimExpiresAt, seq: job.seq, slot, gen: slot.gen });
        this.compactRunning();
        break;
      case "succeeded":
      case "failed":
        q.finished[job.state].push({ at: job.finishedAt, seq: job.seq, slot, gen: slot.gen });
        break;
      default:
        assertNever(job.state);
    }
  }

  /** Extensions and acks leave stale entries behind; rebuild when they dominate. */
  private compactRunning(): void {
    if (this.running.size < 2 * this.runningCount + 1024) return;
    const live = [...this.running.values()].filter((e) => this.liveSlot(e, "running")?.job.claimExpiresAt === e.at);
    this.running.clear();
    for (const entry of live) this.running.push(entry);
  }

  /** Deletes a job; one that had not ended lets the next job of its ordering key go. */
  remove(slot: Slot, now: number): void {
    const job = slot.job;
    const q = this.queues.get(job.queue)!;
    this.jobs.delete(job.id);
    q.jobs.delete(job.id);
    q.counts[job.state]--;
    if (job.state === "running") this.runningCount--;
    if (job.state === "buffered") q.partitions[job.partition]!.buffered.delete(job.id);
    if (job.state === "waiting") q.partitions[job.partition]!.waiting.delete(job.id);
    if (job.idempotencyKey !== "" && q.idempotency.get(job.idempotencyKey) === job.id)
      q.idempotency.delete(job.idempotencyKey);
    slot.gen++;
    if (slot.keyPos !== 0) this.leaveSequence(slot, now);
  }

  liveSlot(entry: IndexEntry, state: StoredState): Slot | undefined {
    const slot = entry.slot;
    return slot.gen === entry.gen && slot.job.state === state ? slot : undefined;
  }

  cleanTop(heap: OrderedIndex<IndexEntry>): IndexEntry | undefined {
    for (let top = heap.peek(); top; top = heap.peek()) {
      if (this.liveSlot(top, "pending")) return top;
      heap.pop();
    }
    return undefined;
  }

  /** The best due pending job of a heap (left in place), or undefined if none is due. */
  dueTop(heap: OrderedIndex<IndexEntry>, now: number): Slot | undefined {
    const top = this.cleanTop(heap);
    return top && top.at <= now ? top.slot : undefined;
  }

  /**
   * The queue's jobs that match, for scan, count, delete and retry: admin calls that read
   * every job of the queue. A big queue (or a body regex over big bodies) would hold the
   * event loop for the whole walk, so every MATCH_YIELD_JOBS jobs or MATCH_YIELD_BYTES of
   * bodies tested it lets other work run. Jobs can change meanwhile: callers that write
   * check each job again (matchesNow) in the step that writes.
   */
  async *matching(queue: string, filter: JobFilter, now: number): AsyncGenerator<Slot> {
    const q = this.queues.get(queue);
    if (!q) return;
    let jobs = 0;
    let bytes = 0;
    for (const id of q.jobs) {
      const slot = this.jobs.get(id);
      if (!slot) continue; // removed while the walk let other work run
      if (matchesFilter(slot.job, filter, now)) yield slot;
      jobs++;
      if (filter.bodyRegex) bytes += slot.job.body.length;
      if (jobs >= MATCH_YIELD_JOBS || bytes >= MATCH_YIELD_BYTES) {
        jobs = 0;
        bytes = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  /** Whether `slot` is still a job of the store and still matches (after a walk that let other work run). */
  matchesNow(slot: Slot, filter: JobFilter, now: number): boolean {
    return this.jobs.get(slot.job.id) === slot && matchesFilter(slot.job, filter, now);
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected state ${String(value)}`);
}
