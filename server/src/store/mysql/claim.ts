/**
 * The MySQL claim's read and the next-due lookup, both aware of the jobs this process holds
 * (held-jobs.ts). The claim writes nothing: it reads each due priority level after its
 * cursor, or from its start when the level holds nothing or needs a rescan, and the jobs it
 * returns are held in memory until the broker starts or releases them.
 */
import { byteBudget } from "../../domain/byte-budget.js";
import type { JobRecord } from "../../domain/job-record.js";
import { limits } from "../../domain/limits.js";
import type { HeldLevel, HeldPartition, Position } from "./held-jobs.js";
import * as sql from "./queries.js";
import { type JobRow, toRecord } from "./rows.js";
import { type Conn, type Param, select } from "./shard.js";

/** Marks a claimed job whose body the claim's read left out (too big for its share of the bound). */
const UNREAD_BODY = new Uint8Array(0);

interface ClaimRequest {
  queue: string;
  partition: number;
  limit: number;
  maxBytes?: number;
  now: number;
}

type ClaimRow = JobRow & { body_bytes?: number | string };
interface PlaceRow {
  id: string;
  run_after: number | string;
  seq: number | string;
}

/**
 * Due jobs of the partition, best first, up to `limit` or the byte bound, none of them held
 * already; they are held once the whole read has succeeded. A kept job whose body was too
 * big to come with the read has body UNREAD_BODY.
 */
export async function claimDue(c: Conn, held: HeldPartition, p: ClaimRequest): Promise<JobRecord[]> {
  const read = new ClaimRead(c, held, p);
  const touched: HeldLevel[] = [];
  try {
    for (const row of await pendingLevels(c, p.queue, p.partition)) {
      if (read.claimed.length >= p.limit) break;
      if (row.next_at === null || Number(row.next_at) > p.now) continue;
      const level = held.level(Number(row.priority));
      touched.push(level);
      const priority = Number(row.priority);
      const cut = level.needsRescan(p.now) ? await read.rescan(level, priority) : await read.onward(level, priority);
      if (cut) break;
    }
    const withoutBody = read.claimed.filter((job) => job.body === UNREAD_BODY);
    if (withoutBody.length > 0) await readBodies(c, withoutBody);
  } catch (err) {
    // Cursors may have moved past rows this claim will not return: look behind them again.
    for (const level of touched) level.rescan = true;
    throw err;
  }
  for (const job of read.claimed) held.hold(job);
  return read.claimed;
}

/** Fills in the bodies of jobs read without them (bodies larger than their share of a bounded claim). */
async function readBodies(c: Conn, jobs: JobRecord[]): Promise<void> {
  const rows = await select<{ id: string; body: Buffer | null }>(
    c,
    sql.selectBodies(jobs.length),
    jobs.map((j) => j.id),
  );
  const bodies = new Map(rows.map((r) => [r.id, r.body]));
  for (const job of jobs) {
    const body = bodies.get(job.id);
    job.body = body ? new Uint8Array(body.buffer, body.byteOffset, body.byteLength) : new Uint8Array();
  }
}

/** One claim's progress: what it kept so far and its byte budget. */
class ClaimRead {
  readonly claimed: JobRecord[] = [];
  private readonly fits: (bytes: number) => boolean;
  private readonly sized: boolean;
  /** The bound's share per job asked for: larger bodies are read afterwards, if kept. */
  private readonly share: Param[];

  constructor(
    private readonly c: Conn,
    private readonly held: HeldPartition,
    private readonly p: ClaimRequest,
  ) {
    this.fits = byteBudget(p.maxBytes);
    this.sized = p.maxBytes !== undefined;
    this.share = this.sized ? [Math.floor(p.maxBytes! / p.limit)] : [];
  }

  /** Reads the level after its cursor (from its start when it has none); true when the byte bound cut the claim. */
  async onward(level: HeldLevel, priority: number): Promise<boolean> {
    // From the start, skipping held jobs: exact by itself, as a rescan is.
    if (level.cursor === undefined) level.rescanned(this.p.now, undefined);
    for (;;) {
      const want = this.p.limit - this.claimed.length;
      if (want <= 0) return false;
      const cursor = level.cursor;
      const rows = await select<ClaimRow>(this.c, sql.claimRows(this.sized, cursor !== undefined), [
        ...this.share,
        this.p.queue,
        this.p.partition,
        priority,
        this.p.now,
        ...(cursor ? cursorParams(cursor) : []),
        want,
      ]);
      for (const row of rows) {
        // Held already: a cut rescan left the cursor behind some held jobs.
        if (!this.held.jobs.has(row.id) && !this.keep(row)) return true;
        level.cursor = placeOf(row);
      }
      if (rows.length < want) return false;
    }
  }

  /**
   * Looks behind the cursor for due rows no claim took (index-only: at most the held jobs
   * plus what is wanted), claims those first, then goes on after the cursor. True when the
   * byte bound cut the claim.
   */
  async rescan(level: HeldLevel, priority: number): Promise<boolean> {
    const cursor = level.cursor;
    if (cursor === undefined) return this.onward(level, priority);
    const want = this.p.limit - this.claimed.length;
    const places = await select<PlaceRow>(this.c, sql.levelPlaces(true, "upTo"), [
      this.p.queue,
      this.p.partition,
      priority,
      this.p.now,
      ...cursorParams(cursor),
      level.count + want,
    ]);
    const missed = places
      .filter((place) => !this.held.jobs.has(place.id))
      .slice(0, want)
      .map((place) => place.id);
    if (missed.length > 0) {
      const rows = await select<ClaimRow>(this.c, sql.pendingRows(this.sized, missed.length), [
        ...this.share,
        ...missed,
      ]);
      rows.sort((a, b) => Number(a.run_after) - Number(b.run_after) || Number(a.seq) - Number(b.seq));
      for (const row of rows) {
        if (!this.keep(row)) {
          level.rescan = true; // rows are still behind the cursor: the next claim looks again
          return true;
        }
      }
      // As many as wanted: more may be behind still.
      if (missed.length >= want) {
        level.rescan = true;
        return false;
      }
    }
    level.rescanned(this.p.now, cursor);
    return this.onward(level, priority);
  }

  /** Keeps a row if it fits the byte budget (the first always does). */
  private keep(row: ClaimRow): boolean {
    const size = row.body_bytes != null ? Number(row.body_bytes) : 0;
    if (!this.fits(size)) return false;
    const job = toRecord(row);
    if (row.body === null && size > 0) job.body = UNREAD_BODY;
    this.claimed.push(job);
    return true;
  }
}

/**
 * The earliest run_after among the partition's pending jobs that this process does not
 * hold. A level holding jobs is read by places after its cursor (from its start when it
 * needs a rescan) until the first unheld row: at most its held jobs plus one.
 */
export async function nextDueAt(
  c: Conn,
  held: HeldPartition | undefined,
  queue: string,
  partition: number,
): Promise<number | undefined> {
  let next: number | undefined;
  for (const row of await pendingLevels(c, queue, partition)) {
    if (row.next_at === null) continue;
    let at: number | undefined = Number(row.next_at);
    const level = held?.level(Number(row.priority));
    if (level && level.count > 0) {
      const cursor = level.rescan ? undefined : level.cursor;
      const places = await select<PlaceRow>(c, sql.levelPlaces(false, cursor ? "after" : undefined), [
        queue,
        partition,
        Number(row.priority),
        ...(cursor ? cursorParams(cursor) : []),
        level.count + 1,
      ]);
      const first = places.find((place) => !held!.jobs.has(place.id));
      at = first ? Number(first.run_after) : undefined;
    }
    if (at !== undefined && (next === undefined || at < next)) next = at;
  }
  return next;
}

/** Earliest run_after of pending rows per priority level (held ones included): one index dive each. */
function pendingLevels(
  c: Conn,
  queue: string,
  partition: number,
): Promise<Array<{ priority: number; next_at: number | string | null }>> {
  return select(c, sql.PENDING_LEVELS, pendingLevelParams(queue, partition));
}

export function pendingLevelParams(queue: string, partition: number): Param[] {
  return Array.from({ length: limits.prioritiesMax }, () => [queue, partition]).flat();
}

function cursorParams(cursor: Position): Param[] {
  return [cursor.runAfter, cursor.runAfter, cursor.seq];
}

function placeOf(row: { run_after: number | string; seq: number | string }): Position {
  return { runAfter: Number(row.run_after), seq: Number(row.seq) };
}
