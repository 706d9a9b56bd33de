/**
 * Queues on SQLite: their rows (mirrored in SqliteContext.queues), stats and state counts
 * from queue_counts and a few index dives, and DeleteQueue in three steps (begin, chunks of jobs, end) so
 * that no statement deletes more than a chunk: store-functions.ts drives them.
 */
import { queueNotFound } from "../../domain/errors.js";
import type { JobFilter } from "../../domain/job-filter.js";
import type { StoredState } from "../../domain/job-record.js";
import type { QueueConfig } from "../../domain/queue-config.js";
import type { QueueRecord, QueueStatsRecord } from "../store.js";
import type { SqliteContext } from "./context.js";
import { releaseFreePages } from "./free-pages.js";

export function queueCreate(
  ctx: SqliteContext,
  p: { name: string; config: QueueConfig; now: number },
): { queue: QueueRecord; created: boolean } {
  // The store's queueCreate waits for a DeleteQueue of the same name to finish first.
  if (ctx.deleting.has(p.name)) throw new Error(`queue "${p.name}" is being deleted`);
  const existing = ctx.queues.get(p.name);
  if (existing) return { queue: cloneQueue(existing), created: false };
  ctx.run("INSERT INTO queues (name, config, created_at) VALUES (?, ?, ?)", p.name, JSON.stringify(p.config), p.now);
  const record: QueueRecord = { name: p.name, config: p.config, createdAt: p.now };
  ctx.queues.set(p.name, record);
  return { queue: cloneQueue(record), created: true };
}

export function queueGet(ctx: SqliteContext, p: { name: string }): QueueRecord | undefined {
  const q = ctx.queue(p.name);
  return q && cloneQueue(q);
}

export function queueList(ctx: SqliteContext): QueueRecord[] {
  return [...ctx.queues.values()]
    .filter((q) => !ctx.deleting.has(q.name))
    .map(cloneQueue)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

export function queueUpdate(ctx: SqliteContext, p: { name: string; config: QueueConfig }): QueueRecord | undefined {
  const q = ctx.queue(p.name);
  if (!q) return undefined;
  ctx.run("UPDATE queues SET config = ? WHERE name = ?", JSON.stringify(p.config), p.name);
  const record = { ...q, config: p.config };
  ctx.queues.set(p.name, record);
  return cloneQueue(record);
}

/**
 * Counts from queue_counts; scheduled jobs and the oldest due one from the pending index (a
 * dive per partition and priority, and a count of the jobs not yet due: O(scheduled jobs),
 * index only) and the waiting jobs' index. Buffered jobs are pending in their rows
 * (held-jobs.ts), and were due when claimed: the pending index accounts for them.
 */
export function queueStats(ctx: SqliteContext, p: { name: string; now: number }): QueueStatsRecord {
  const q = ctx.queue(p.name);
  if (!q) throw queueNotFound(p.name);
  const counts = stateCounts(ctx, p.name);
  let scheduled = 0;
  let oldestDue = Number.POSITIVE_INFINITY;
  const due = (at: number | null | undefined) => {
    if (at !== null && at !== undefined && at <= p.now) oldestDue = Math.min(oldestDue, at);
  };
  for (let part = 0; part < q.config.partitions; part++) {
    for (let priority = 1; priority <= q.config.priorities; priority++) {
      const args = [p.name, part, priority] as const;
      due(ctx.get<{ m: number | null }>(PENDING_MIN, ...args)?.m);
      scheduled += ctx.get<{ n: number }>(PENDING_LATER, ...args, p.now)?.n ?? 0;
    }
  }
  due(
    ctx.get<{ m: number | null }>("SELECT MIN(run_after) AS m FROM jobs WHERE queue = ? AND state = 'waiting'", p.name)
      ?.m,
  );
  scheduled +=
    ctx.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM jobs WHERE queue = ? AND state = 'waiting' AND run_after > ?",
      p.name,
      p.now,
    )?.n ?? 0;
  return {
    pending: counts.pending,
    scheduled,
    running: counts.running,
    succeeded: counts.succeeded,
    failed: counts.failed,
    oldestPendingAgeMs: oldestDue === Number.POSITIVE_INFINITY ? 0 : Math.max(0, p.now - oldestDue),
  };
}

const PENDING_MIN =
  "SELECT MIN(run_after) AS m FROM jobs WHERE queue = ? AND part = ? AND state = 'pending' AND priority = ?";
const PENDING_LATER =
  "SELECT COUNT(*) AS n FROM jobs WHERE queue = ? AND part = ? AND state = 'pending' AND priority = ? AND run_after > ?";

/** Jobs of a queue per visible state (buffered and waiting ones are pending). */
function stateCounts(
  ctx: SqliteContext,
  queue: string,
): Record<"pending" | "running" | "succeeded" | "failed", number> {
  const counts = { pending: 0, running: 0, succeeded: 0, failed: 0 };
  for (const row of ctx.all<{ state: keyof typeof counts; n: number }>(
    "SELECT state, n FROM queue_counts WHERE queue = ?",
    queue,
  ))
    counts[row.state] = row.n;
  return counts;
}

/** Jobs of `queue` in a visible state (or all of them), from queue_counts. */
export function jobCountByState(ctx: SqliteContext, p: { queue: string; state?: JobFilter["state"] }): number {
  if (!ctx.queue(p.queue)) return 0;
  const counts = stateCounts(ctx, p.queue);
  return p.state ? counts[p.state] : counts.pending + counts.running + counts.succeeded + counts.failed;
}

/** DeleteQueue, step 1: the queue is gone for every other call from now on. False if there is no such queue. */
export function queueDeleteBegin(ctx: SqliteContext, p: { name: string }): boolean {
  if (!ctx.queue(p.name)) return false;
  ctx.deleting.add(p.name);
  ctx.held.dropQueue(p.name);
  return true;
}

/** DeleteQueue, step 2 (repeated until it deletes fewer than `limit`): up to `limit` of the queue's jobs. */
export function queueDeleteJobs(ctx: SqliteContext, p: { name: string; limit: number }): number {
  const gone = ctx.all<{ state: StoredState }>(
    "DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE queue = ? LIMIT ?) RETURNING state",
    p.name,
    p.limit,
  );
  for (const { state } of gone) ctx.count(p.name, state, undefined);
  if (gone.length > 0) releaseFreePages(ctx);
  return gone.length;
}

/** DeleteQueue failed half-way: the queue is back, with the jobs not yet deleted. */
export function queueDeleteCancel(ctx: SqliteContext, p: { name: string }): void {
  ctx.deleting.delete(p.name);
}

/**
 * DeleteQueue, step 3: the queue's row and counts go; its leases are released but keep
 * their epochs, so an old owner of this queue stays fenced out of a queue created later
 * under the same name.
 */
export function queueDeleteEnd(ctx: SqliteContext, p: { name: string }): void {
  ctx.run("DELETE FROM queues WHERE name = ?", p.name);
  ctx.run("DELETE FROM queue_counts WHERE queue = ?", p.name);
  ctx.run("UPDATE leases SET owner = '', expires_at = 0 WHERE queue = ?", p.name);
  ctx.queues.delete(p.name);
  ctx.deleting.delete(p.name);
}

function cloneQueue(record: QueueRecord): QueueRecord {
  return { ...record, config: { ...record.config, retryPolicy: { ...record.config.retryPolicy } } };
}
