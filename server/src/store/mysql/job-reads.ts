/**
 * Reads of jobs on MySQL: lookup by id, the dry-run peek, scan and count. A queue's jobs
 * are on every shard its partitions are placed on, so peek, scan and count ask every shard
 * and merge; a lookup asks the shard its id names. Jobs this process holds read as
 * buffered (held-jobs.ts overlay); through any other process they read as pending.
 */
import type { JobFilter, ScanCursor } from "../../domain/job-filter.js";
import { compareForDequeue, compareForScan, type JobRecord, withoutBody } from "../../domain/job-record.js";
import { partitionOfId } from "../shard-router.js";
import { filterWhere, matchingJobs, scanPage } from "./job-filter.js";
import type { MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { type JobRow, toRecord } from "./rows.js";
import { select } from "./shard.js";

export async function jobCount(
  ctx: MysqlContext,
  p: { queue: string; filter: JobFilter; now: number },
): Promise<number> {
  const counts = await Promise.all(
    ctx.shards.map((shard) =>
      shard.session(async (c) => {
        if (p.filter.bodyRegex) {
          let n = 0;
          for await (const _ of matchingJobs(c, p.queue, p.filter, p.now)) n++;
          return n;
        }
        const where = filterWhere(p.queue, p.filter, p.now);
        const [row] = await select<{ n: number | string }>(
          c,
          `SELECT COUNT(*) AS n FROM jobs WHERE ${where.sql}`,
          where.params,
        );
        return Number(row?.n ?? 0);
      }),
    ),
  );
  return counts.reduce((a, b) => a + b, 0);
}

export async function jobGetMany(
  ctx: MysqlContext,
  p: { ids: string[]; bodies?: boolean },
): Promise<Array<JobRecord | undefined>> {
  const found = new Map<string, JobRecord>();
  await Promise.all(
    [...(await ctx.router.groupByShard(p.ids, partitionOfId))].map(([shard, items]) =>
      shard.session(async (c) => {
        const ids = [...new Set(items.map((k) => k.item))];
        for (const row of await select<JobRow>(c, sql.selectJobs(ids.length, p.bodies !== false), ids))
          found.set(row.id, ctx.held.overlay(toRecord(row)));
      }),
    ),
  );
  return p.ids.map((id) => found.get(id));
}

export async function jobPeekMany(
  ctx: MysqlContext,
  p: { queue: string; limit: number; now: number },
): Promise<JobRecord[]> {
  const pages = await Promise.all(
    ctx.shards.map((s) => s.session((c) => select<JobRow>(c, sql.PEEK, [p.queue, p.now, p.limit]))),
  );
  return pages
    .flat()
    .map((row) => ctx.held.overlay(toRecord(row)))
    .sort(compareForDequeue)
    .slice(0, p.limit);
}

export async function jobScan(
  ctx: MysqlContext,
  p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number },
): Promise<JobRecord[]> {
  const pages = await Promise.all(
    ctx.shards.map((shard) =>
      shard.session(async (c) => {
        if (!p.filter.bodyRegex) return scanPage(c, p.queue, p.filter, p.limit, p.cursor, p.now, p.bodies !== false);
        const page: JobRecord[] = [];
        for await (const job of matchingJobs(c, p.queue, p.filter, p.now, p.cursor)) {
          page.push(p.bodies === false ? withoutBody(job) : job);
          if (page.length >= p.limit) break;
        }
        return page;
      }),
    ),
  );
  return pages
    .flat()
    .map((job) => ctx.held.overlay(job))
    .sort(compareForScan)
    .slice(0, p.limit);
}
