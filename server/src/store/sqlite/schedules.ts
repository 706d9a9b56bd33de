/**
 * Schedules on SQLite (Store.schedules, docs/workflows.md#schedules), on the thread that
 * owns the database: each method is one of these operations. A schedule is one row by name,
 * its text (workflow-codec.ts, encoded and decoded on the server's thread) beside its
 * revision and its next fire time (schedules_due indexes the ones that have one).
 *
 * A fire (scheduleFire) is one operation, so one savepoint: the revision checked, what it
 * starts inserted unless its derived id exists already (an instance with its first queue
 * jobs, or a plain job), the jobs to cancel deleted where no worker holds them, and the
 * schedule replaced. An insert refused (its queue is gone) throws, and nothing of the fire
 * is kept.
 */
import type { NewJob } from "../../domain/job-record.js";
import type { SqliteContext } from "./context.js";
import { jobInsertMany } from "./insert-jobs.js";
import { cancelJobs, type InstanceRow, insertInstance } from "./instance-writes.js";

/** A schedule as stored: the columns its fence and index need, and its text (workflow-codec.ts). */
export interface ScheduleRow {
  name: string;
  rev: number;
  /** 0: never due. */
  nextFireAt: number;
  text: string;
}

/** What a fire starts: an instance with its first queue jobs, or (no instance) one plain job. */
export interface FireStartRow {
  instance?: InstanceRow;
  jobs: NewJob[];
}

export function scheduleInsert(
  ctx: SqliteContext,
  p: { schedule: ScheduleRow; max: number },
): "inserted" | "exists" | "full" {
  if (ctx.get("SELECT 1 FROM schedules WHERE name = ?", p.schedule.name)) return "exists";
  // Counted up to the quota only: the table never holds more than the quota (its inserts are refused).
  const n = ctx.get<{ n: number }>("SELECT COUNT(*) AS n FROM (SELECT 1 FROM schedules LIMIT ?)", p.max)?.n ?? 0;
  if (n >= p.max) return "full";
  writeSchedule(ctx, p.schedule);
  return "inserted";
}

export function scheduleGet(ctx: SqliteContext, p: { name: string }): string | undefined {
  return ctx.get<{ schedule: string }>("SELECT schedule FROM schedules WHERE name = ?", p.name)?.schedule;
}

export function scheduleList(ctx: SqliteContext, p: { limit: number; after?: string }): string[] {
  const rows =
    p.after === undefined
      ? ctx.all<{ schedule: string }>("SELECT schedule FROM schedules ORDER BY name LIMIT ?", p.limit)
      : ctx.all<{ schedule: string }>(
          "SELECT schedule FROM schedules WHERE name > ? ORDER BY name LIMIT ?",
          p.after,
          p.limit,
        );
  return rows.map((r) => r.schedule);
}

export function scheduleReplace(ctx: SqliteContext, p: { schedule: ScheduleRow; rev: number }): boolean {
  return (
    ctx.run(
      "UPDATE schedules SET rev = ?, next_fire_at = ?, schedule = ? WHERE name = ? AND rev = ?",
      p.schedule.rev,
      p.schedule.nextFireAt,
      p.schedule.text,
      p.schedule.name,
      p.rev,
    ) === 1
  );
}

export function scheduleDelete(ctx: SqliteContext, p: { name: string }): boolean {
  return ctx.run("DELETE FROM schedules WHERE name = ?", p.name) === 1;
}

/**
 * Up to `limit` schedules due at `now`, earliest first (ties by name), and the earliest
 * next fire time after `now`: a range of schedules_due and one dive into it. (`next_fire_at
 * > 0` repeats the index's WHERE: SQLite uses a partial index only for a query that says it.)
 */
export function scheduleDue(
  ctx: SqliteContext,
  p: { now: number; limit: number },
): { due: string[]; nextDueAt?: number } {
  const due = ctx
    .all<{ schedule: string }>(
      "SELECT schedule FROM schedules WHERE next_fire_at > 0 AND next_fire_at <= ? ORDER BY next_fire_at, name LIMIT ?",
      p.now,
      p.limit,
    )
    .map((r) => r.schedule);
  const next = ctx.get<{ next_fire_at: number }>(
    "SELECT next_fire_at FROM schedules WHERE next_fire_at > 0 AND next_fire_at > ? ORDER BY next_fire_at LIMIT 1",
    p.now,
  );
  return next ? { due, nextDueAt: next.next_fire_at } : { due };
}

export function scheduleFire(
  ctx: SqliteContext,
  p: { rev: number; schedule: ScheduleRow; start?: FireStartRow; cancel: string[]; now: number },
): { applied: boolean; existed: boolean } {
  const stored = ctx.get<{ rev: number }>("SELECT rev FROM schedules WHERE name = ?", p.schedule.name);
  if (stored?.rev !== p.rev) return { applied: false, existed: false };
  let existed = false;
  if (p.start?.instance) {
    existed = !insertInstance(ctx, { instance: p.start.instance, jobs: p.start.jobs, now: p.now });
  } else if (p.start) {
    existed = p.start.jobs.some((job) => ctx.get("SELECT 1 FROM jobs WHERE id = ?", job.id) !== undefined);
    if (!existed) jobInsertMany(ctx, { jobs: p.start.jobs, now: p.now }); // throws if its queue is gone
  }
  cancelJobs(ctx, p.cancel, p.now);
  writeSchedule(ctx, p.schedule);
  return { applied: true, existed };
}

function writeSchedule(ctx: SqliteContext, s: ScheduleRow): void {
  ctx.run(
    "INSERT INTO schedules (name, rev, next_fire_at, schedule) VALUES (?, ?, ?, ?) " +
      "ON CONFLICT (name) DO UPDATE SET rev = excluded.rev, next_fire_at = excluded.next_fire_at, schedule = excluded.schedule",
    s.name,
    s.rev,
    s.nextFireAt,
    s.text,
  );
}
