/**
 * The memory store's data model: a job's slot, the index entries that point at it, and per
 * queue and partition the indexes memory-store.ts describes. An entry of the ordered
 * indexes and finished logs is not removed when its job changes: it carries the job's
 * generation and is skipped once the job has changed since (MemoryState.liveSlot), so a
 * change never searches an index.
 */
import type { JobRecord, StoredState } from "../../domain/job-record.js";
import type { QueueRecord } from "../store.js";
import { KeySequences } from "./key-sequences.js";
import { OrderedIndex } from "./ordered-index.js";

export interface Slot {
  job: JobRecord;
  gen: number;
  /** Position in its ordering key's sequence while the job is in one; 0 otherwise. */
  keyPos: number;
}

export interface IndexEntry {
  /** run_after for pending entries, claim expiry for running, finished_at for finished. */
  at: number;
  seq: number;
  /** The job's slot itself (no map lookup on the hot path); stale once slot.gen moved on. */
  slot: Slot;
  gen: number;
}

export const byTimeThenSeq = (a: IndexEntry, b: IndexEntry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export class PartitionIndex {
  readonly pending: OrderedIndex<IndexEntry>[] = [];
  readonly buffered = new Set<string>();
  /** Jobs behind the head of their ordering key (for stats; claims never look here). */
  readonly waiting = new Set<string>();
  readonly sequences = new KeySequences<Slot>();

  pendingHeap(priority: number): OrderedIndex<IndexEntry> {
    let heap = this.pending[priority - 1];
    if (!heap) {
      for (let p = this.pending.length; p < priority; p++) this.pending.push(new OrderedIndex(byTimeThenSeq));
      heap = this.pending[priority - 1]!;
    }
    return heap;
  }
}

/** Finished jobs in the order they finished (a queue with a moving head). */
export class FinishedLog {
  private items: IndexEntry[] = [];
  private head = 0;

  push(entry: IndexEntry): void {
    this.items.push(entry);
  }

  peek(): IndexEntry | undefined {
    return this.items[this.head];
  }

  shift(): void {
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

export class QueueData {
  readonly partitions: PartitionIndex[];
  readonly jobs = new Set<string>();
  readonly idempotency = new Map<string, string>();
  readonly finished = { succeeded: new FinishedLog(), failed: new FinishedLog() };
  readonly counts: Record<StoredState, number> = {
    pending: 0,
    waiting: 0,
    buffered: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
  };

  constructor(public record: QueueRecord) {
    this.partitions = Array.from({ length: record.config.partitions }, () => new PartitionIndex());
  }
}
