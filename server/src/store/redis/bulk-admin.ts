/**
 * Bulk admin on Redis: retention GC (jobDeleteFinished, one script call per shard over the
 * queue's partitions there), DeleteJobs (the walk of walk.ts chooses ids, job_delete_ids.lua
 * deletes those still matching) and RetryFailedJobs (job_retry_failed.lua over each
 * partition's failed jobs). All in bounded chunks, so no call holds Redis for long.
 */
import { type JobFilter, matchesBody } from "../../domain/job-filter.js";
import { partitions } from "./queue-admin.js";
import { type RedisContext, runOnPartition } from "./redis-context.js";
import { runScript } from "./scripts.js";
import { CHUNK, filterArgs, walk } from "./walk.js";

export async function jobDeleteFinished(
  ctx: RedisContext,
  p: { queue: string; succeededBefore: number; failedBefore: number; limit: number },
): Promise<number> {
  let deleted = 0;
  for (const [shard, partitionList] of await ctx.router.byShard(p.queue, await partitions(ctx, p.queue))) {
    if (deleted >= p.limit) break;
    const on = ctx.keysOn(shard);
    const args = [on.prefix, p.queue, p.succeededBefore, p.failedBefore, p.limit - deleted, ...partitionList];
    deleted += (await runScript(shard, "job_delete_finished", [on.claimChecks()], args)) as number;
  }
  return deleted;
}

export async function jobDeleteMany(
  ctx: RedisContext,
  p: { queue: string; filter: JobFilter; limit: number; now: number },
): Promise<number> {
  const f = p.filter;
  let deleted = 0;
  for (const partition of await partitions(ctx, p.queue)) {
    if (deleted >= p.limit) break;
    await walk(
      ctx.scan,
      { queue: p.queue, partition, filter: f, now: p.now, mode: f.bodyRegex ? "full" : "ids", want: p.limit - deleted },
      async (_, jobs, ids) => {
        const chosen = f.bodyRegex ? jobs.filter((j) => matchesBody(j, f)).map((j) => j.id) : ids;
        const doomed = chosen.slice(0, p.limit - deleted);
        if (doomed.length > 0) {
          const args = [p.queue, partition, p.now, ...filterArgs(f), ...doomed];
          deleted += (await runOnPartition(
            ctx,
            p.queue,
            partition,
            "job_delete_ids",
            (on) => [on.all(p.queue, partition)],
            args,
          )) as number;
        }
        return deleted < p.limit;
      },
    );
  }
  return deleted;
}

export async function jobRetryFailed(
  ctx: RedisContext,
  p: { queue: string; priority?: number; attemptsAllowed: number; runAfter: number; limit: number; now: number },
): Promise<number> {
  let retried = 0;
  for (const partition of await partitions(ctx, p.queue)) {
    for (let offset = 0; retried < p.limit; ) {
      const args = [
        p.queue,
        partition,
        p.now,
        p.priority ?? 0,
        p.attemptsAllowed,
        p.runAfter,
        offset,
        CHUNK,
        p.limit - retried,
      ];
      const [n, skipped, done] = (await runOnPartition(
        ctx,
        p.queue,
        partition,
        "job_retry_failed",
        (on) => [on.failed(p.queue, partition)],
        args,
      )) as number[];
      retried += n!;
      offset += skipped!;
      if (done) break;
    }
  }
  return retried;
}
