/**
 * Enqueue on MySQL: jobInsertMany writes a batch across the shards its jobs' partitions are
 * on, all or nothing, while shard 0 holds the queue rows under a shared lock; each shard's
 * part (insertOnShard) resolves idempotency keys, joins ordering keys' sequences, then
 * runs multi-row INSERTs, inside a transaction jobInsertMany owns.
 */
import { queueNotFound } from "../../domain/errors.js";
import type { NewJob } from "../../domain/job-record.js";
import { limits } from "../../domain/limits.js";
import { arrivalState } from "../../domain/transitions.js";
import type { Located } from "../shard-router.js";
import type { MysqlContext } from "./mysql-context.js";
import { joinSequences } from "./ordering.js";
import * as sql from "./queries.js";
import { insertValues } from "./rows.js";
import { type Conn, run, select } from "./shard.js";
import { duplicateKeyIndex } from "./transient.js";

/** Bytes of bodies per INSERT statement; larger batches take several statements in one transaction. */
const INSERT_BYTES = 4 * 1024 * 1024;

export async function jobInsertMany(ctx: MysqlContext, p: { jobs: NewJob[]; now: number }): Promise<string[]> {
  if (p.jobs.length === 0) return [];
  for (let tries = 0; ; tries++) {
    try {
      const ids = await insertOnce(ctx, p.jobs, p.now, tries > 0);
      // A job due before a claim's cursor would be passed over: held-jobs.ts looks again.
      if (!ctx.held.empty)
        for (const job of p.jobs) ctx.held.get(job.queue, job.partition)?.note(job.priority, job.runAfter);
      return ids;
    } catch (err) {
      // A concurrent enqueue took one of our idempotency keys between our lookup and our
      // INSERT: run again, and the lookup now finds its job. Bounded: each race needs a new key.
      if (duplicateKeyIndex(err) !== "jobs_idempotency" || tries >= 10) throw err;
    }
  }
}

/** One enqueue attempt; `replay`: an earlier attempt may have committed on some shard. */
async function insertOnce(ctx: MysqlContext, jobs: NewJob[], now: number, replay: boolean): Promise<string[]> {
  const ids: string[] = new Array(jobs.length);
  const byShard = await ctx.router.groupByShard(jobs, (j) => j);
  const shard0 = ctx.shards[0]!;
  // Shard 0 holds the queue rows: lock them (shared) until every shard has committed.
  await shard0.transaction(
    async (c0, attempt) => {
      await lockQueues(c0, jobs);
      await Promise.all(
        [...byShard].map(async ([shard, items]) => {
          const write = (c: Conn, retry: number) => insertOnShard(c, items, now, replay || attempt > 0 || retry > 0);
          const resolved =
            shard === shard0 ? await write(c0, 0) : await shard.transaction(write, { retryAmbiguousCommit: true });
          for (const [i, k] of items.entries()) ids[k.index] = resolved[i]!;
        }),
      );
    },
    // insertOnShard looks its ids up before writing again, so a replay is harmless.
    { retryAmbiguousCommit: true },
  );
  return ids;
}

/**
 * Takes a shared lock on the jobs' queue rows (shard 0), so a concurrent DeleteQueue waits
 * until the caller's transaction commits (and then deletes its jobs too); not_found for a
 * queue that does not exist.
 */
export async function lockQueues(c0: Conn, jobs: NewJob[]): Promise<void> {
  const names = [...new Set(jobs.map((j) => j.queue))];
  if (names.length === 0) return;
  const present = new Set(
    (await select<{ name: string }>(c0, sql.queuesLockShared(names.length), names)).map((r) => r.name),
  );
  const missing = jobs.find((j) => !present.has(j.queue));
  if (missing) throw queueNotFound(missing.queue);
}

/**
 * One shard's part of an enqueue, inside its transaction: resolve idempotency keys
 * against live jobs (and earlier jobs of the batch), append jobs with an ordering key to
 * their sequences (waiting behind a job of the key that has not ended), then multi-row
 * INSERTs. On a replay (`replay`: an earlier attempt may have committed) it first looks
 * its ids up.
 */
export async function insertOnShard(
  c: Conn,
  items: Array<Located<NewJob>>,
  now: number,
  replay: boolean,
): Promise<string[]> {
  const live = new Map<string, string>(); // queue \0 key → id
  const keyOf = (job: NewJob) => `${job.queue}\u0000${job.idempotencyKey}`;
  const keysByQueue = new Map<string, Set<string>>();
  for (const { item } of items) {
    if (item.idempotencyKey === "") continue;
    let keys = keysByQueue.get(item.queue);
    if (!keys) keysByQueue.set(item.queue, (keys = new Set()));
    keys.add(item.idempotencyKey);
  }
  for (const [queue, keys] of keysByQueue) {
    const rows = await select<{ idempotency_key: string; id: string }>(c, sql.idempotencyLookup(keys.size), [
      queue,
      ...keys,
    ]);
    for (const row of rows) live.set(`${queue}\u0000${row.idempotency_key}`, row.id);
  }
  const fresh: NewJob[] = [];
  const resolved = items.map(({ item }) => {
    if (item.idempotencyKey !== "") {
      const existing = live.get(keyOf(item));
      if (existing !== undefined) return existing;
      live.set(keyOf(item), item.id);
    }
    fresh.push(item);
    return item.id;
  });
  let toWrite = fresh;
  if (replay && fresh.length > 0) {
    // The batch commits whole or not at all, so finding any id means the earlier attempt landed.
    const found = await select<{ id: string }>(
      c,
      sql.existingIds(fresh.length),
      fresh.map((j) => j.id),
    );
    if (found.length > 0) toWrite = [];
  }
  const waiting = await joinSequences(
    c,
    toWrite.filter((job) => job.orderingKey !== ""),
  );
  for (const chunk of byteChunks(toWrite)) {
    await run(
      c,
      sql.insertJobs(chunk.length),
      chunk.flatMap((job) => insertValues(job, arrivalState(waiting.has(job.id)), now)),
    );
  }
  return resolved;
}

/** Splits rows so one INSERT carries at most INSERT_BYTES of bodies (and at least one row). */
function byteChunks(jobs: NewJob[]): NewJob[][] {
  const chunks: NewJob[][] = [];
  let current: NewJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    if (
      current.length > 0 &&
      (bytes + job.body.byteLength > INSERT_BYTES || current.length >= limits.enqueueBatchMax)
    ) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(job);
    bytes += job.body.byteLength;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
