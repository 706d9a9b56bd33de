/**
 * Enqueue, one shard's part: resolve idempotency keys, join ordering keys' sequences,
 * then multi-row INSERTs. Runs inside a transaction the caller owns (see
 * MysqlStore.jobInsertMany).
 */
import type { NewJob } from "../../domain/job-record.js";
import { limits } from "../../domain/limits.js";
import type { Located } from "../shard-router.js";
import { arrivalState } from "../../domain/transitions.js";
import { joinSequences } from "./ordering.js";
import * as sql from "./queries.js";
import { insertValues } from "./rows.js";
import { type Conn, run, select } from "./shard.js";

/** Bytes of bodies per INSERT statement; larger batches take several statements in one transaction. */
const INSERT_BYTES = 4 * 1024 * 1024;

/**
 * One shard's part of an enqueue, inside its transaction: resolve idempotency keys
 * against live jobs (and earlier jobs of the batch), append jobs with an ordering key to
 * their sequences (waiting behind a job of the key that has not ended), then multi-row
 * INSERTs. On a replay (`replay`: an earlier attempt may have committed) it first looks
 * its ids up.
 */
export async function insertOnShard(c: Conn, items: Array<Located<NewJob>>, now: number, replay: boolean): Promise<string[]> {
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
    const rows = await select<{ idempotency_key: string; id: string }>(c, sql.idempotencyLookup(keys.size), [queue, ...keys]);
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
    const found = await select<{ id: string }>(c, sql.existingIds(fresh.length), fresh.map((j) => j.id));
    if (found.length > 0) toWrite = [];
  }
  const waiting = await joinSequences(c, toWrite.filter((job) => job.orderingKey !== ""));
  for (const chunk of byteChunks(toWrite)) {
    await run(c, sql.insertJobs(chunk.length), chunk.flatMap((job) => insertValues(job, arrivalState(waiting.has(job.id)), now)));
  }
  return resolved;
}

/** Splits rows so one INSERT carries at most INSERT_BYTES of bodies (and at least one row). */
function byteChunks(jobs: NewJob[]): NewJob[][] {
  const chunks: NewJob[][] = [];
  let current: NewJob[] = [];
  let bytes = 0;
  for (const job of jobs) {
    if (current.length > 0 && (bytes + job.body.byteLength > INSERT_BYTES || current.length >= limits.enqueueBatchMax)) {
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
