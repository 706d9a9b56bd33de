/**
 * The MySQL store's buffered state, kept in the memory of the process whose broker claimed
 * the jobs instead of in their rows (docs/mysql.md, "The claim writes nothing").
 *
 * Only the holder of a partition's lease claims from it, and it claims in dequeue order, so
 * per priority level a cursor, the (run_after, seq) of the last row claimed, tells the next
 * claim where to go on: the rows at or before it are held (in this map, not yet started or
 * released) or gone. A row can still turn up behind a cursor: a run_after in the past, a
 * retry, a promoted ordering-key job, a released job, an insert that committed after a claim
 * read past its place. Writes made through this store object note such rows (noteQueued)
 * and flag the level for a rescan; rows written by other processes are found by the
 * periodic rescan (RESCAN_EVERY_MS). A rescan reads the level from its start, skipping held
 * jobs, so it is exact.
 *
 * Held jobs read as "buffered" through this store object (overlay) and as pending through
 * any other: users see both as PENDING. A new lease epoch starts from nothing: what an older
 * epoch held was never written, so a new owner finds those jobs pending.
 */
import { parseJobId } from "../../domain/job-id.js";
import type { JobRecord } from "../../domain/job-record.js";

/** How often a claim rereads a level from its start while it holds jobs of it: how late a job queued behind the cursor by another process can be. */
export const RESCAN_EVERY_MS = 1000;

/** A row's place in jobs_claim within its level. */
export interface Position {
  runAfter: number;
  seq: number;
}

interface HeldJob extends Position {
  priority: number;
}

/** One priority level of a held partition. */
export class HeldLevel {
  /** Held jobs of this level. */
  count = 0;
  /** Every due pending row of the level up to here is held or gone, unless `rescan` is set. */
  cursor: Position | undefined;
  /** A row may sit behind the cursor without being held: the next claim rereads from the start. */
  rescan = false;
  constructor(public rescannedAt: number) {}

  /** Whether the next claim must look behind the cursor: flagged, or due for the periodic look while jobs are held. */
  needsRescan(now: number): boolean {
    return this.rescan || (this.count > 0 && now - this.rescannedAt >= RESCAN_EVERY_MS);
  }

  /** The level was just read from its start up to `cursor`: it is exact again. */
  rescanned(now: number, cursor: Position | undefined): void {
    this.rescan = false;
    this.rescannedAt = now;
    this.cursor = cursor;
  }
}

/** What one partition's lease holder (this process) has claimed under `epoch`. */
export class HeldPartition {
  readonly jobs = new Map<string, HeldJob>();
  private readonly levels = new Map<number, HeldLevel>();
  /** Claims reading now: notes wait until their cursors have moved (see note()). */
  private reading = 0;
  private deferred: Array<{ priority?: number; runAfter: number }> = [];

  constructor(
    readonly epoch: number,
    private readonly createdAt: number,
  ) {}

  level(priority: number): HeldLevel {
    let level = this.levels.get(priority);
    if (!level) this.levels.set(priority, (level = new HeldLevel(this.createdAt)));
    return level;
  }

  hold(job: { id: string; priority: number; runAfter: number; seq: number }): void {
    if (this.jobs.has(job.id)) return;
    this.jobs.set(job.id, { priority: job.priority, runAfter: job.runAfter, seq: job.seq });
    this.level(job.priority).count++;
  }

  /** Lets go of the given jobs (started, released, gone); returns those that were held. */
  take(ids: Iterable<string>): HeldJob[] {
    const taken: HeldJob[] = [];
    for (const id of ids) {
      const job = this.jobs.get(id);
      if (!job) continue;
      this.jobs.delete(id);
      const level = this.level(job.priority);
      // A level holding nothing is read from its start, exactly: no cursor needed.
      if (--level.count === 0) level.cursor = undefined;
      taken.push(job);
    }
    return taken;
  }

  /**
   * Lets go of jobs whose rows may still be pending (released, a start that failed, maybe
   * not deleted): they sit behind the cursor now, so the next claim looks for them there.
   * Returns how many were held.
   */
  release(ids: Iterable<string>): number {
    const released = this.take(ids);
    for (const job of released) this.note(job.priority, job.runAfter);
    return released.length;
  }

  /** A row of this partition became pending at `runAfter` (any level when `priority` is unknown). */
  note(priority: number | undefined, runAfter: number): void {
    // A claim reading now may move its cursor past the row without having seen it (the row
    // committed after the read): judge the note once the claim has set its cursors.
    if (this.reading > 0) this.deferred.push({ priority, runAfter });
    else this.flagBehind(priority, runAfter);
  }

  /** Wraps a claim's read: notes made meanwhile are judged against the cursors it leaves. */
  async reads<T>(work: () => Promise<T>): Promise<T> {
    this.reading++;
    try {
      return await work();
    } finally {
      if (--this.reading === 0) {
        const notes = this.deferred;
        this.deferred = [];
        for (const n of notes) this.flagBehind(n.priority, n.runAfter);
      }
    }
  }

  private flagBehind(priority: number | undefined, runAfter: number): void {
    for (const [p, level] of this.levels) {
      if (priority !== undefined && p !== priority) continue;
      // Same run_after as the cursor: the row's seq may still be lower (a retry keeps its seq).
      if (level.cursor && runAfter <= level.cursor.runAfter) level.rescan = true;
    }
  }
}

/** The held partitions of one store object, by queue and partition. */
export class HeldJobs {
  private readonly partitions = new Map<string, HeldPartition>();

  /** The partition's state for a claim under `epoch`: a different epoch than held starts afresh. */
  forClaim(queue: string, partition: number, epoch: number, now: number): HeldPartition {
    const key = keyOf(queue, partition);
    let held = this.partitions.get(key);
    if (!held || held.epoch !== epoch) this.partitions.set(key, (held = new HeldPartition(epoch, now)));
    return held;
  }

  get(queue: string, partition: number): HeldPartition | undefined {
    return this.partitions.get(keyOf(queue, partition));
  }

  /** Forgets a partition's state when its epoch is below `belowEpoch`; returns how many jobs it held. */
  dropBelow(queue: string, partition: number, belowEpoch: number): number {
    const held = this.get(queue, partition);
    if (!held || held.epoch >= belowEpoch) return 0;
    this.partitions.delete(keyOf(queue, partition));
    return held.jobs.size;
  }

  /** A row became pending in the partition its id names (see HeldPartition.note). */
  noteQueued(id: string, priority: number | undefined, runAfter: number): void {
    const where = parseJobId(id);
    if (where) this.get(where.queue, where.partition)?.note(priority, runAfter);
  }

  /** The jobs were deleted (or may have been): no longer held; any still there is looked for again. */
  forget(ids: string[]): void {
    if (this.empty) return;
    for (const id of ids) {
      const where = parseJobId(id);
      if (where) this.get(where.queue, where.partition)?.release([id]);
    }
  }

  /** Rows of the queue became pending in ways not worth tracking one by one (RetryFailedJobs, deletes that promote): every level rescans. */
  noteQueue(queue: string): void {
    for (const held of this.ofQueue(queue)) held.note(undefined, Number.NEGATIVE_INFINITY); // behind every cursor
  }

  dropQueue(queue: string): void {
    for (const key of [...this.partitions.keys()]) if (key.startsWith(`${queue}\u0000`)) this.partitions.delete(key);
  }

  /** Nothing held anywhere: writes need not look for cursors. */
  get empty(): boolean {
    return this.partitions.size === 0;
  }

  /** The record as this process sees it: a held job is buffered under the epoch that holds it. */
  overlay(job: JobRecord): JobRecord {
    if (job.state !== "pending") return job;
    const held = this.get(job.queue, job.partition);
    return held?.jobs.has(job.id) ? { ...job, state: "buffered", bufferEpoch: held.epoch } : job;
  }

  private *ofQueue(queue: string): Iterable<HeldPartition> {
    for (const [key, held] of this.partitions) if (key.startsWith(`${queue}\u0000`)) yield held;
  }
}

function keyOf(queue: string, partition: number): string {
  return `${queue}\u0000${partition}`;
}
