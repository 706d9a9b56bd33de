/**
 * Reads of jobs on Redis: lookup by id and the dry-run peek (one script call per shard),
 * scan and count (the walk of walk.ts over each partition; a count without a filter reads
 * the partitions' state counters instead). A scan or peek merges the partitions' pages.
 */
import { type JobFilter, matchesBody, type ScanCursor } from "../../domain/job-filter.js";
import { compareForDequeue, compareForScan, type JobRecord, withoutBody } from "../../domain/job-record.js";
import { partitionOfId } from "../shard-router.js";
import { decodeJob, decodeJobs } from "./codec.js";
import { partitions, queueCounts } from "./queue-admin.js";
import type { RedisContext } from "./redis-context.js";
import { runScript } from "./scripts.js";
import { walk } from "./walk.js";

export async function jobCount(
  ctx: RedisContext,
  p: { queue: string; filter: JobFilter; now: number },
): Promise<number> {
  const f = p.filter;
  if (f.priority === undefined && f.future === undefined && f.bodyRegex === undefined) {
    // State counts are kept per partition: no walk.
    const stats = await queueCounts(ctx, p.queue, p.now);
    if (!stats) return 0;
    return f.state === undefined ? stats.pending + stats.running + stats.succeeded + stats.failed : stats[f.state];
  }
  let count = 0;
  for (const partition of await partitions(ctx, p.queue)) {
    await walk(
      ctx.scan,
      { queue: p.queue, partition, filter: f, now: p.now, mode: f.bodyRegex ? "full" : "count", want: Infinity },
      (n, jobs) => {
        count += f.bodyRegex ? jobs.filter((j) => matchesBody(j, f)).length : n;
        return true;
      },
    );
  }
  return count;
}

export async function jobGetMany(
  ctx: RedisContext,
  p: { ids: string[]; bodies?: boolean },
): Promise<Array<JobRecord | undefined>> {
  const found: Array<JobRecord | undefined> = p.ids.map(() => undefined);
  await Promise.all(
    [...(await ctx.router.groupByShard(p.ids, partitionOfId))].map(async ([shard, located]) => {
      const on = ctx.keysOn(shard);
      const args = [on.prefix, p.bodies === false ? "0" : "1", ...located.map((l) => l.item)];
      const replies = (await runScript(shard, "job_get_many", [on.claimChecks()], args)) as unknown[];
      replies.forEach((reply, k) => {
        if (reply) found[located[k]!.index] = decodeJob(reply, p.bodies === false);
      });
    }),
  );
  return found;
}

export async function jobPeekMany(
  ctx: RedisContext,
  p: { queue: string; limit: number; now: number },
): Promise<JobRecord[]> {
  const replies = await Promise.all(
    [...(await ctx.router.byShard(p.queue, await partitions(ctx, p.queue)))].map(([shard, partitionList]) =>
      runScript(
        shard,
        "job_peek_many",
        [ctx.keysOn(shard).claimChecks()],
        [ctx.keysOn(shard).prefix, p.queue, p.limit, p.now, ...partitionList],
      ),
    ),
  );
  return replies
    .flatMap((reply) => decodeJobs(reply))
    .sort(compareForDequeue)
    .slice(0, p.limit);
}

export async function jobScan(
  ctx: RedisContext,
  p: { queue: string; filter: JobFilter; limit: number; cursor?: ScanCursor; bodies?: boolean; now: number },
): Promise<JobRecord[]> {
  // Each partition's first `limit` matches after the cursor hold the global first `limit`.
  const pages = await Promise.all(
    (await partitions(ctx, p.queue)).map(async (partition) => {
      const page: JobRecord[] = [];
      // Without bodies the script sends each job's attributes only, unless a body regex needs them.
      const mode = p.bodies === false && !p.filter.bodyRegex ? "meta" : "full";
      await walk(
        ctx.scan,
        { queue: p.queue, partition, filter: p.filter, now: p.now, cursor: p.cursor, mode, want: p.limit },
        (_, jobs) => {
          for (const job of jobs)
            if (matchesBody(job, p.filter)) page.push(p.bodies === false && mode === "full" ? withoutBody(job) : job);
          return page.length < p.limit;
        },
      );
      return page;
    }),
  );
  return pages.flat().sort(compareForScan).slice(0, p.limit);
}
