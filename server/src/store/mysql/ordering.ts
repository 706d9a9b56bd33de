/**
 * Ordering keys on MySQL (docs/mysql.md, "Ordering keys"). Two small tables beside jobs,
 * which jobs without a key never touch:
 * - ordering_keys (queue, part, ordering_key) → next_pos: one row per key that has jobs
 *   not yet ended, deleted with the last of them. Every change to a key's sequence locks
 *   it first, so enqueues and acks through different servers are serialized per key
 *   (READ COMMITTED takes no gap locks: a missing row could lock nothing). That the row
 *   already existed is how an enqueue knows its job must wait, without reading members.
 * - ordering_members (queue, part, ordering_key, pos) → job_id: a key's jobs not yet
 *   ended, in order; the first is the head, the only one not 'waiting'.
 * These run inside the caller's transaction, after it locked or wrote the jobs.
 */
import type { NewJob } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import * as sql from "./queries.js";
import { keyBytes, setClause } from "./rows.js";
import { type Conn, type Param, run, select } from "./shard.js";

/** A job in (or entering, or leaving) its key's sequence. */
export type SequenceJob = Pick<NewJob, "id" | "queue" | "partition" | "orderingKey">;

/** Keys per head-lookup statement: each is one UNION ALL arm. */
const HEADS_PER_STATEMENT = 200;

interface KeyGroup {
  queue: string;
  partition: number;
  key: string;
  jobs: SequenceJob[];
}

/**
 * Appends `jobs` (in this order) to their keys' sequences, locking each key's row.
 * Returns the ids of the jobs that must wait: behind a job of the key that has not
 * ended, or behind an earlier job of `jobs`.
 */
export async function joinSequences(c: Conn, jobs: SequenceJob[]): Promise<Set<string>> {
  const waiting = new Set<string>();
  if (jobs.length === 0) return waiting;
  const groups = groupByKey(jobs);
  await run(
    c,
    sql.orderingKeysReserve(jobs.length),
    groups.flatMap((g) => g.jobs.flatMap(() => keyParams(g))),
  );
  const counters = await select<{ queue: string; part: number; ordering_key: Buffer; next_pos: number | string }>(
    c,
    sql.orderingKeysSelect(groups.length),
    groups.flatMap(keyParams),
  );
  const byId = new Map(groups.map((g) => [refId(g.queue, g.partition, g.key), g]));
  const members: Param[] = [];
  for (const row of counters) {
    const group = byId.get(refId(row.queue, Number(row.part), row.ordering_key.toString("utf8")))!;
    // The row starts at 1 when created: a first position above 1 means it was already there.
    const first = Number(row.next_pos) - group.jobs.length + 1;
    group.jobs.forEach((job, i) => {
      if (first > 1 || i > 0) waiting.add(job.id);
      members.push(...keyParams(group), first + i, job.id);
    });
  }
  await run(c, sql.orderingMembersInsert(jobs.length), members);
  return waiting;
}

/**
 * Takes jobs that ended or were deleted out of their keys' sequences; each key's new head
 * is promoted if it was waiting (transitions.promote), and a key left without jobs loses
 * its row. Returns, by id of a job that left, the run_after of the job it promoted.
 */
export async function leaveSequences(c: Conn, jobs: SequenceJob[], now: number): Promise<Map<string, number>> {
  const promotedBy = new Map<string, number>();
  if (jobs.length === 0) return promotedBy;
  const groups = groupByKey(jobs);
  await select(c, sql.orderingKeysLock(groups.length), groups.flatMap(keyParams));
  await run(
    c,
    sql.orderingMembersDelete(jobs.length),
    jobs.map((j) => j.id),
  );
  const heads = new Map<string, { id: string; state: string; run_after: number | string }>();
  for (let at = 0; at < groups.length; at += HEADS_PER_STATEMENT) {
    const chunk = groups.slice(at, at + HEADS_PER_STATEMENT);
    const rows = await select<{
      queue: string;
      part: number;
      ordering_key: Buffer;
      id: string;
      state: string;
      run_after: number | string;
    }>(c, sql.orderingHeads(chunk.length), chunk.flatMap(keyParams));
    for (const row of rows) heads.set(refId(row.queue, Number(row.part), row.ordering_key.toString("utf8")), row);
  }
  const idle = groups.filter((g) => !heads.has(refId(g.queue, g.partition, g.key)));
  if (idle.length > 0) await run(c, sql.orderingKeysDelete(idle.length), idle.flatMap(keyParams));
  const promoted = groups.flatMap((g) => {
    const head = heads.get(refId(g.queue, g.partition, g.key));
    return head?.state === "waiting" ? [{ group: g, head }] : [];
  });
  if (promoted.length > 0) {
    const set = setClause(transitions.promote(now));
    await run(c, sql.promoteIds(set.sql, promoted.length), [...set.params, ...promoted.map((p) => p.head.id)]);
    for (const { group, head } of promoted)
      for (const job of group.jobs) promotedBy.set(job.id, Number(head.run_after));
  }
  return promotedBy;
}

/** Jobs by (queue, partition, key), keys in primary-key order (the order rows get locked), jobs in the given order. */
function groupByKey(jobs: SequenceJob[]): KeyGroup[] {
  const groups = new Map<string, KeyGroup>();
  for (const job of jobs) {
    const id = refId(job.queue, job.partition, job.orderingKey);
    let group = groups.get(id);
    if (!group)
      groups.set(id, (group = { queue: job.queue, partition: job.partition, key: job.orderingKey, jobs: [] }));
    group.jobs.push(job);
  }
  return [...groups.values()].sort(
    (a, b) =>
      (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0) ||
      a.partition - b.partition ||
      Buffer.compare(keyBytes(a.key), keyBytes(b.key)),
  );
}

function keyParams(g: { queue: string; partition: number; key: string }): Param[] {
  return [g.queue, g.partition, keyBytes(g.key)];
}

/** Queue and partition never contain NUL; the key (FIFO's is "\0") comes last. */
function refId(queue: string, partition: number, key: string): string {
  return `${queue}\u0000${partition}\u0000${key}`;
}
