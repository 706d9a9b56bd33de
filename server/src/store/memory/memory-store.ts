/**
 * The embedded default store: everything in this process's memory, lost on exit. It is
 * a real store, not a mock: it passes the same shared suite as Redis and MySQL.
 *
 * Indexes (all lazily cleaned: an index entry carries the job's generation and is
 * skipped once the job has changed since):
 * - per partition and priority, an OrderedIndex of pending jobs by (run_after, seq): O(1)
 *   for jobs enqueued in order, O(log n) for scheduled or retried ones; never a scan;
 * - one OrderedIndex of running claims by expiry, so the claim-timeout sweep costs O(expired);
 * - per queue, finished jobs in finishing order, so retention GC costs O(deleted);
 * - per partition and ordering key, the jobs that have not ended, in enqueue order
 *   (KeySequences): O(1) to join and to find the next head when one ends. Waiting jobs
 *   are in no pending heap, so claims and peeks never see them.
 * Scan, count and stats iterate the queue's jobs: admin calls, O(jobs in the queue).
 */
import { byteBudget } from "../../domain/byte-budget.js";
import { queueNotFound } from "../../domain/errors.js";
import { compareForDequeue, compareForScan, type JobRecord, type NewJob, type StoredState, withoutBody } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import type { JobPatch } from "../../domain/transitions.js";
import type { BrokerEntry, Lease, OutcomeResult, QueueRecord, QueueStatsRecord, Store } from "../store.js";
import { KeySequences } from "./key-sequences.js";
import { OrderedIndex } from "./ordered-index.js";
import { type JobFilter, type ScanCursor, matchesFilter } from "../../domain/job-filter.js";

interface Slot {
  job: JobRecord;
  gen: number;
  /** Position in its ordering key's sequence while the job is in one; 0 otherwise. */
  keyPos: number;
}

interface IndexEntry {
  /** run_after for pending entries, claim expiry for running, finished_at for finished. */
  at: number;
  seq: number;
  /** The job's slot itself (no map lookup on the hot path); stale once slot.gen moved on. */
  slot: Slot;
  gen: number;
}

const byTimeThenSeq = (a: IndexEntry, b: IndexEntry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);

class PartitionIndex {
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
class FinishedLog {
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

class QueueData {
  readonly partitions: PartitionIndex[];
  readonly jobs = new Set<string>();
  readonly idempotency = new Map<string, string>();
  readonly finished = { succeeded: new FinishedLog(), failed: new FinishedLog() };
  readonly counts: Record<StoredState, number> = { pending: 0, waiting: 0, buffered: 0, running: 0, succeeded: 0, failed: 0 };

  constructor(public record: QueueRecord) {
    this.partitions = Array.from({ length: record.config.partitions }, () => new PartitionIndex());
  }
}

export class MemoryStore implements Store {
  readonly name = "memory";
  readonly defaultBufferSize = 1000;
  private readonly queues = new Map<string, QueueData>();
  private readonly jobs = new Map<string, Slot>();
  private readonly running = new OrderedIndex<IndexEntry>(byTimeThenSeq);
  private runningCount = 0;
  private readonly leases = new Map<string, Lease>();
  private readonly epochs = new Map<string, number>();
  private readonly brokers = new Map<string, BrokerEntry>();
  private seq = 0;

  // ---- broker registry

  async brokerHeartbeat(p: { id: string; url: string; ttlMs: number; now: number }): Promise<void> {
    this.brokers.set(p.id, { id: p.id, url: p.url, expiresAt: p.now + p.ttlMs });
  }

  async brokerList(p: { now: number }): Promise<BrokerEntry[]> {
    for (const [id, b] of this.brokers) if (b.expiresAt <= p.now) this.brokers.delete(id);
    return [...this.brokers.values()].map((b) => ({ ...b })).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async brokerLeave(p: { id: string }): Promise<void> {
    this.brokers.delete(p.id);
  }

  // ---- leases

  async leaseAcquire(p: { queue: string; partition: number; owner: string; ttlMs: number; now: number }): Promise<Lease | undefined> {
    const key = `${p.queue}/${p.partition}`;
    const current = this.leases.get(key);
    if (current && current.owner !== p.owner && current.expiresAt > p.now) return undefined;
    let epoch = current?.epoch ?? this.epochs.get(key) ?? 0;
    if (!current || current.owner !== p.owner) epoch += 1;
    this.epochs.set(key, epoch);
    const lease: Lease = { queue: p.queue, partition: p.partition, owner: p.owner, epoch, expiresAt: p.now + p.ttlMs };
    this.leases.set(key, lease);
    return { ...lease };
  }

  async leaseRelease(p: { queue: string; partition: number; owner: string; epoch: number }): Promise<void> {
    const key = `${p.queue}/${p.partition}`;
    const current = this.leases.get(key);
    if (current && current.owner === p.owner && current.epoch === p.epoch) this.leases.delete(key);
  }

  private holdsLease(queue: string, partition: number, epoch: number): boolean {
    return this.leases.get(`${queue}/${partition}`)?.epoch === epoch;
  }

  // ---- jobs

  async jobClaimExpire(p: { now: number; limit: number }): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }> {
    const expired: JobRecord[] = [];
    for (;;) {
      const top = this.running.peek();
      if (!top) break;
      const slot = this.liveSlot(top, "running");
      if (!slot || slot.job.claimExpiresAt !== top.at) {
        this.running.pop();
        continue;
      }
      if (top.at > p.now || expired.length >= p.limit) break;
      this.running.pop();
      this.apply(slot, transitions.expireClaim(slot.job, p.now));
      expired.push({ ...slot.job });
    }
    return { expired, nextExpiryAt: this.running.peek()?.at };
  }

  async jobClaimMany(p: { queue: string; partition: number; epoch: number; limit: number; maxBytes?: number; now: number }): Promise<JobRecord[]> {
    const q = this.queues.get(p.queue);
    const index = q?.partitions[p.partition];
    if (!q || !index || !this.holdsLease(p.queue, p.partition, p.epoch)) return [];
    const claimed: JobRecord[] = [];
    const fits = byteBudget(p.maxBytes);
    let full = false;
    for (const heap of index.pending) {
      while (claimed.length < p.limit) {
        const slot = this.dueTop(heap, p.now);
        if (!slot) break;
        if (!fits(slot.job.body.length)) {
          full = true;
          break;
        }
        heap.pop();
        this.apply(slot, transitions.claimIntoBuffer(p.epoch));
        claimed.push({ ...slot.job });
      }
      if (full || claimed.length >= p.limit) break;
    }
    return claimed;
  }

  async jobCheckpointMany(p: { items: Array<transitions.CheckpointInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return p.items.map((item) => this.applyToRunning(item.id, item.claimToken, (job) => transitions.checkpoint(job, item, p.now)));
  }

  async jobCompleteMany(p: { items: Array<{ id: string; claimToken: string; customStatus: string }>; now: number }): Promise<OutcomeResult[]> {
    return p.items.map((item) => this.applyToRunning(item.id, item.claimToken, (job) => transitions.succeed(job, item.customStatus, p.now)));
  }

  async jobCount(p: { queue: string; filter: JobFilter; now: number }): Promise<number> {
    let count = 0;
    for (const _ of this.matching(p.queue, p.filter, p.now)) count++;
    return count;
  }

  async jobDeleteFinished(p: { queue: string; succeededBefore: number; failedBefore: number; limit: number }): Promise<number> {
    const q = this.queues.get(p.queue);
    if (!q) return 0;
    let deleted = 0;
    for (const [state, before] of [["succeeded", p.succeededBefore], ["failed", p.failedBefore]] as const) {
      const log = q.finished[state];
      for (let entry = log.peek(); entry && entry.at < before && deleted < p.limit; entry = log.peek()) {
        log.shift();
        const slot = this.liveSlot(entry, state);
        if (slot) {
          this.remove(slot, 0); // finished: in no ordering sequence
          deleted++;
        }
      }
    }
    return deleted;
  }

  async jobDeleteMany(p: { queue: string; filter: JobFilter; limit: number; now: number }): Promise<number> {
    const doomed: Slot[] = [];
    for (const slot of this.matching(p.queue, p.filter, p.now)) {
      if (doomed.length >= p.limit) break;
      doomed.push(slot);
    }
    for (const slot of doomed) this.remove(slot, p.now);
    return doomed.length;
  }

  async jobFailMany(p: { items: Array<transitions.FailureInput & { id: string; claimToken: string }>; now: number }): Promise<OutcomeResult[]> {
    return p.items.map((item) => this.applyToRunning(item.id, item.claimToken, (job) => transitions.fail(job, item, p.now)));
  }

  async jobGetMany(p: { ids: string[]; bodies?: boolean }): Promise<Array<JobRecord | undefined>> {
    return p.ids.map((id) => {
      const slot = this.jobs.get(id);
      if (!slot) return undefined;
      return p.bodies === false ? withoutBody(slot.job) : { ...slot.job };
    });
  }

  async jobInsertMany(p: { jobs: NewJob[]; now: number }): Promise<string[]> {
    // Check every queue first: a batch is all or nothing.
    for (const job of p.jobs) if (!this.queues.has(job.queue)) throw queueNotFound(job.queue);
    return p.jobs.map((spec) => {
      const q = this.queues.get(spec.queue)!;
      if (spec.idempotencyKey !== "") {
        const existing = q.idempotency.get(spec.idempotencyKey);
        if (existing !== undefined && this.jobs.has(existing)) return existing;
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
        seq: ++this.seq,
      };
      const slot: Slot = { job, gen: 0, keyPos: 0 };
      if (job.orderingKey !== "") {
        job.state = transitions.arrivalState(q.partitions[job.partition]!.sequences.join(job.orderingKey, slot, job.seq));
      }
      this.jobs.set(job.id, slot);
      q.jobs.add(job.id);
      q.counts[job.state]++;
      this.index(slot);
      return job.id;
    });
  }

  async jobNextDueAt(p: { queue: string; partition: number }): Promise<number | undefined> {
    const index = this.queues.get(p.queue)?.partitions[p.partition];
    let next: number | undefined;
    for (const heap of index?.pending ?? []) {
      const top = this.cleanTop(heap);
      if (top && (next === undefined || top.at < next)) next = top.at;
    }
    return next;
  }

  async jobPeekMany(p: { queue: string; limit: number; now: number }): Promise<JobRecord[]> {
    const q = this.queues.get(p.queue);
    if (!q) return [];
    const found: JobRecord[] = [];
    for (const index of q.partitions) {
      for (const id of index.buffered) found.push({ ...this.jobs.get(id)!.job });
      for (const heap of index.pending) {
        const taken: Array<[IndexEntry, Slot]> = [];
        while (taken.length < p.limit) {
          const top = this.cleanTop(heap);
          if (!top || top.at > p.now) break;
          heap.pop();
          taken.push([top, top.slot]);
        }
        for (const [entry, slot] of taken) {
          heap.push(entry);
          found.push({ ...slot.job });
        }
      }
    }
    return found.sort(compareForDequeue).slice(0, p.limit);
  }

  async jobReleaseBuffered(p: { queue: string; partition: number; epoch?: number; ids?: string[]; belowEpoch?: number }): Promise<number> {
    const index = this.queues.get(p.queue)?.partitions[p.partition];
    if (!index) return 0;
    const candidates = p.ids ?? [...index.buffered];
    let released = 0;
    for (const id of candidates) {
      const slot = this.jobs.get(id);
      if (!slot || slot.job.state !== "buffered") continue;
      const mine = p.ids !== undefined && slot.job.bufferEpoch === p.epoch;
      const stale = p.belowEpoch !== undefined && slot.job.bufferEpoch < p.belowEpoch;
      if (!mine && !stale) continue;
      this.apply(slot, transitions.unbuffer());
      released++;
    }
    return released;
  }

  async jobRetryFailed(p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number }): Promise<number> {
    const failed = [...this.matching(p.queue, { state: "failed", priority: p.priority }, p.now)]
      .sort((a, b) => a.job.finishedAt - b.job.finishedAt || a.job.seq - b.job.seq)
      .slice(0, p.limit);
    for (const slot of failed) {
      const key = slot.job.orderingKey;
      // Back into its key's sequence, at the tail: behind every job of the key that has not ended.
      const busy = key !== "" && this.queues.get(p.queue)!.partitions[slot.job.partition]!.sequences.join(key, slot, ++this.seq);
      this.apply(slot, transitions.retryFailed(p.attemptsAllowed, p.runAfter, p.now, busy));
    }
    return failed.length;
  }

  async jobScan(p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number }): Promise<JobRecord[]> {
    const c = p.cursor;
    const page: JobRecord[] = [];
    for (const slot of this.matching(p.queue, p.filter, p.now)) {
      const j = slot.job;
      if (c && (j.runAfter > c.runAfter || (j.runAfter === c.runAfter && j.id >= c.id))) continue;
      page.push(j);
    }
    page.sort(compareForScan);
    return page.slice(0, p.limit).map((j) => (p.bodies === false ? withoutBody(j) : { ...j }));
  }

  async jobStartMany(p: { queue: string; partition: number; epoch: number; plans: transitions.HandOutPlan[]; now: number }): Promise<string[]> {
    if (!this.holdsLease(p.queue, p.partition, p.epoch)) return [];
    const started: string[] = [];
    for (const plan of p.plans) {
      const slot = this.jobs.get(plan.id);
      if (!slot || slot.job.state !== "buffered" || slot.job.bufferEpoch !== p.epoch) continue;
      this.apply(slot, transitions.handOut(slot.job, plan, p.now));
      started.push(plan.id);
    }
    return started;
  }

  // ---- queues

  async queueCreate(p: { name: string; config: QueueRecord["config"]; now: number }): Promise<{ queue: QueueRecord; created: boolean }> {
    const existing = this.queues.get(p.name);
    if (existing) return { queue: cloneQueue(existing.record), created: false };
    const record: QueueRecord = { name: p.name, config: p.config, createdAt: p.now };
    this.queues.set(p.name, new QueueData(record));
    return { queue: cloneQueue(record), created: true };
  }

  async queueDelete(p: { name: string }): Promise<boolean> {
    const q = this.queues.get(p.name);
    if (!q) return false;
    for (const id of q.jobs) {
      const slot = this.jobs.get(id)!;
      slot.gen++; // index entries (the global running index too) now see it as gone
      this.jobs.delete(id);
    }
    this.queues.delete(p.name);
    for (const key of [...this.leases.keys()]) if (key.startsWith(`${p.name}/`)) this.leases.delete(key);
    return true;
  }

  async queueGet(p: { name: string }): Promise<QueueRecord | undefined> {
    const q = this.queues.get(p.name);
    return q ? cloneQueue(q.record) : undefined;
  }

  async queueList(): Promise<QueueRecord[]> {
    return [...this.queues.values()].map((q) => cloneQueue(q.record)).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async queueStats(p: { name: string; now: number }): Promise<QueueStatsRecord> {
    const q = this.queues.get(p.name);
    if (!q) throw queueNotFound(p.name);
    let scheduled = 0;
    let oldestDue: number | undefined;
    for (const index of q.partitions) {
      for (const id of index.buffered) oldestDue = Math.min(oldestDue ?? Infinity, this.jobs.get(id)!.job.runAfter);
      for (const id of index.waiting) {
        const runAfter = this.jobs.get(id)!.job.runAfter;
        if (runAfter > p.now) scheduled++;
        else oldestDue = Math.min(oldestDue ?? Infinity, runAfter);
      }
      for (const heap of index.pending) {
        for (const entry of heap.values()) {
          const slot = this.liveSlot(entry, "pending");
          if (!slot) continue;
          if (entry.at > p.now) scheduled++;
          else oldestDue = Math.min(oldestDue ?? Infinity, entry.at);
        }
      }
    }
    return {
      pending: q.counts.pending + q.counts.waiting + q.counts.buffered,
      scheduled,
      running: q.counts.running,
      succeeded: q.counts.succeeded,
      failed: q.counts.failed,
      oldestPendingAgeMs: oldestDue === undefined ? 0 : Math.max(0, p.now - oldestDue),
    };
  }

  async queueUpdate(p: { name: string; config: QueueRecord["config"] }): Promise<QueueRecord | undefined> {
    const q = this.queues.get(p.name);
    if (!q) return undefined;
    q.record = { ...q.record, config: p.config };
    // Partitions only grow (the engine refuses fewer): new ones start empty.
    while (q.partitions.length < p.config.partitions) q.partitions.push(new PartitionIndex());
    return cloneQueue(q.record);
  }

  async close(): Promise<void> {}

  // ---- internals

  /**
   * Applies a transition's patch and re-indexes the job for its new state. A job that
   * ended leaves its ordering key's sequence, and the key's next job is promoted (and
   * returned, so acks can announce it). Every patch that ends a job sets updatedAt (the
   * transition's time), which the promotion uses as now.
   */
  private apply(slot: Slot, patch: JobPatch): Slot | undefined {
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
    return slot.keyPos !== 0 && transitions.isTerminal(after) ? this.leaveSequence(slot, slot.job.updatedAt) : undefined;
  }

  /** Takes a job out of its ordering key's sequence; promotes the key's new head if it was waiting. */
  private leaveSequence(slot: Slot, now: number): Slot | undefined {
    slot.keyPos = 0;
    const head = this.queues.get(slot.job.queue)!.partitions[slot.job.partition]!.sequences.head(slot.job.orderingKey);
    if (head?.job.state !== "waiting") return undefined;
    this.apply(head, transitions.promote(now));
    return head;
  }

  private index(slot: Slot): void {
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
  private remove(slot: Slot, now: number): void {
    const job = slot.job;
    const q = this.queues.get(job.queue)!;
    this.jobs.delete(job.id);
    q.jobs.delete(job.id);
    q.counts[job.state]--;
    if (job.state === "running") this.runningCount--;
    if (job.state === "buffered") q.partitions[job.partition]!.buffered.delete(job.id);
    if (job.state === "waiting") q.partitions[job.partition]!.waiting.delete(job.id);
    if (job.idempotencyKey !== "" && q.idempotency.get(job.idempotencyKey) === job.id) q.idempotency.delete(job.idempotencyKey);
    slot.gen++;
    if (slot.keyPos !== 0) this.leaveSequence(slot, now);
  }

  private liveSlot(entry: IndexEntry, state: StoredState): Slot | undefined {
    const slot = entry.slot;
    return slot.gen === entry.gen && slot.job.state === state ? slot : undefined;
  }

  private cleanTop(heap: OrderedIndex<IndexEntry>): IndexEntry | undefined {
    for (let top = heap.peek(); top; top = heap.peek()) {
      if (this.liveSlot(top, "pending")) return top;
      heap.pop();
    }
    return undefined;
  }

  /** The best due pending job of a heap (left in place), or undefined if none is due. */
  private dueTop(heap: OrderedIndex<IndexEntry>, now: number): Slot | undefined {
    const top = this.cleanTop(heap);
    return top && top.at <= now ? top.slot : undefined;
  }

  private applyToRunning(id: string, claimToken: string, decide: (job: JobRecord) => JobPatch): OutcomeResult {
    const slot = this.jobs.get(id);
    const outcome = transitions.checkClaim(slot?.job, claimToken);
    if (outcome !== "acknowledged" || !slot) return { outcome };
    const promoted = this.apply(slot, decide(slot.job));
    const result: OutcomeResult = { outcome, pendingAt: slot.job.state === "pending" ? slot.job.runAfter : undefined };
    if (promoted) result.promotedAt = promoted.job.runAfter;
    return result;
  }

  private *matching(queue: string, filter: JobFilter, now: number): Generator<Slot> {
    const q = this.queues.get(queue);
    if (!q) return;
    for (const id of q.jobs) {
      const slot = this.jobs.get(id)!;
      if (matchesFilter(slot.job, filter, now)) yield slot;
    }
  }
}

function cloneQueue(record: QueueRecord): QueueRecord {
  return { ...record, config: { ...record.config, retryPolicy: { ...record.config.retryPolicy } } };
}

function assertNever(value: never): never {
  throw new Error(`unexpected state ${String(value)}`);
}
