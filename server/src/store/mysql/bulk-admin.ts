/**
 * Bulk admin on MySQL: retention GC (jobDeleteFinished), DeleteJobs and RetryFailedJobs,
 * in chunks of CHUNK rows per statement so none holds locks for long, each chunk chosen by
 * id and written with its condition re-checked. A chunk with a job that heads, or rejoins,
 * an ordering key takes a transaction of its own that keeps the key's sequence whole
 * (ordering.ts); other chunks are single statements.
 */
import type { JobFilter } from "../../domain/job-filter.js";
import { parseJobId } from "../../domain/job-id.js";
import type { StoredState } from "../../domain/job-record.js";
import * as transitions from "../../domain/transitions.js";
import { filterWhere, matchingJobs } from "./job-filter.js";
import { CHUNK, type MysqlContext } from "./mysql-context.js";
import { joinSequences, leaveSequences, type SequenceJob } from "./ordering.js";
import * as sql from "./queries.js";
import { setClause } from "./rows.js";
import { type Conn, type Param, run, select } from "./shard.js";

export async function jobDeleteFinished(
  ctx: MysqlContext,
  p: { queue: string; succeededBefore: number; failedBefore: number; limit: number },
): Promise<number> {
  let deleted = 0;
  for (const shard of ctx.shards) {
    for (const [state, before] of [
      ["succeeded", p.succeededBefore],
      ["failed", p.failedBefore],
    ] as const) {
      while (deleted < p.limit) {
        const chunk = Math.min(CHUNK, p.limit - deleted);
        const [found, n] = await shard.session(async (c) => {
          const ids = (await select<{ id: string }>(c, sql.FINISHED_EXPIRED, [p.queue, state, before, chunk])).map(
            (r) => r.id,
          );
          return [
            ids.length,
            ids.length === 0 ? 0 : await run(c, sql.deleteFinishedIds(ids.length), [...ids, state, before]),
          ] as const;
        });
        deleted += n;
        if (found < chunk) break;
      }
    }
  }
  return deleted;
}

export async function jobDeleteMany(
  ctx: MysqlContext,
  p: { queue: string; filter: JobFilter; limit: number; now: number },
): Promise<number> {
  const where = filterWhere(p.queue, p.filter, p.now);
  let deleted = 0;
  for (const shard of ctx.shards) {
    while (deleted < p.limit) {
      const chunk = Math.min(CHUNK, p.limit - deleted);
      // Ids first, then DELETE by id with the filter re-checked: a statement replayed after
      // a lost connection can never delete more than `limit`.
      const { ids, n } = await shard.session(async (c) => {
        const ids: string[] = [];
        // A job that has not ended may head an ordering key: then delete and promote in one transaction.
        let keyed = false;
        if (!p.filter.bodyRegex) {
          for (const row of await select<{ id: string; state: StoredState; ordering_key: Buffer | null }>(
            c,
            sql.selectIdKeys(where.sql),
            [...where.params, chunk],
          )) {
            ids.push(row.id);
            keyed ||= row.ordering_key !== null && !transitions.isTerminal(row.state);
          }
        } else {
          for await (const job of matchingJobs(c, p.queue, p.filter, p.now)) {
            ids.push(job.id);
            keyed ||= job.orderingKey !== "" && !transitions.isTerminal(job.state);
            if (ids.length >= chunk) break;
          }
        }
        if (ids.length === 0 || keyed) return { ids, n: undefined };
        return { ids, n: await run(c, `${sql.deleteIds(ids.length)} AND ${where.sql}`, [...ids, ...where.params]) };
      });
      deleted += n ?? (ids.length === 0 ? 0 : await shard.transaction((c) => deleteWithKeys(c, ids, where, p.now)));
      // Deleted jobs are no longer held (one the filter no longer matched is looked for again).
      ctx.held.forget(ids);
      // Deleting the head of an ordering key promotes the next job, maybe behind a cursor.
      if (n === undefined && ids.length > 0) ctx.held.noteQueue(p.queue);
      if (ids.length < chunk) break;
    }
  }
  return deleted;
}

export async function jobRetryFailed(
  ctx: MysqlContext,
  p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number },
): Promise<number> {
  const set = setClause(transitions.retryFailed(p.attemptsAllowed, p.runAfter, p.now));
  const oldest = sql.failedOldest(p.priority !== undefined);
  let retried = 0;
  for (const shard of ctx.shards) {
    while (retried < p.limit) {
      const chunk = Math.min(CHUNK, p.limit - retried);
      const { ids, n } = await shard.session(async (c) => {
        const params: Param[] = [p.queue, ...(p.priority !== undefined ? [p.priority] : []), chunk];
        const rows = await select<{ id: string; ordering_key: Buffer | null }>(c, oldest, params);
        const ids = rows.map((r) => r.id);
        // Jobs with an ordering key rejoin their sequences: a transaction of their own.
        if (ids.length === 0 || rows.some((r) => r.ordering_key !== null)) return { ids, n: undefined };
        return { ids, n: await run(c, sql.retryFailedIds(set.sql, ids.length), [...set.params, ...ids]) };
      });
      retried += n ?? (ids.length === 0 ? 0 : await shard.transaction((c) => retryWithKeys(c, ids, p)));
      if (ids.length > 0) ctx.held.noteQueue(p.queue);
      if (ids.length < chunk) break;
    }
  }
  return retried;
}

/**
 * One DeleteJobs chunk where some job may head an ordering key: lock the rows still
 * matching, delete them, and promote the next job of each key whose head went. Also the
 * cancels of a workflow step (workflows.ts), inside its transaction.
 */
export async function deleteWithKeys(
  c: Conn,
  ids: string[],
  where: { sql: string; params: Param[] },
  now: number,
): Promise<number> {
  const rows = await select<{ id: string; state: StoredState; ordering_key: Buffer | null }>(
    c,
    sql.lockIdKeys(ids.length, where.sql),
    [...ids, ...where.params],
  );
  if (rows.length === 0) return 0;
  const deleted = await run(
    c,
    sql.deleteIds(rows.length),
    rows.map((r) => r.id),
  );
  const leaving: SequenceJob[] = rows
    .filter((r) => r.ordering_key !== null && !transitions.isTerminal(r.state))
    .map((r) => ({ id: r.id, ...parseJobId(r.id)!, orderingKey: r.ordering_key!.toString("utf8") }));
  await leaveSequences(c, leaving, now);
  return deleted;
}

/**
 * One RetryFailedJobs chunk with jobs that have an ordering key: lock those still
 * failed, put them back at the tail of their keys' sequences (in the chunk's order,
 * oldest failure first), then write retryFailed: pending, or waiting behind the key.
 */
async function retryWithKeys(
  c: Conn,
  ids: string[],
  p: { attemptsAllowed: number; runAfter: number; now: number },
): Promise<number> {
  const keyed = await select<{ id: string; queue: string; part: number; ordering_key: Buffer | null }>(
    c,
    sql.lockFailedKeyed(ids.length),
    ids,
  );
  const order = new Map(ids.map((id, i) => [id, i]));
  const joining: SequenceJob[] = keyed
    .filter((r) => r.ordering_key !== null)
    .sort((a, b) => order.get(a.id)! - order.get(b.id)!)
    .map((r) => ({
      id: r.id,
      queue: r.queue,
      partition: Number(r.part),
      orderingKey: r.ordering_key!.toString("utf8"),
    }));
  const waiting = await joinSequences(c, joining);
  let retried = 0;
  for (const busy of [false, true]) {
    const chosen = ids.filter((id) => waiting.has(id) === busy);
    if (chosen.length === 0) continue;
    const set = setClause(transitions.retryFailed(p.attemptsAllowed, p.runAfter, p.now, busy));
    retried += await run(c, sql.retryFailedIds(set.sql, chosen.length), [...set.params, ...chosen]);
  }
  return retried;
}
