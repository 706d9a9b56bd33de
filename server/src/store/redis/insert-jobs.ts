/**
 * Enqueue on Redis: one job_insert_many.lua call per shard the batch's partitions are on.
 * The batch is all or nothing: across shards every queue is checked on shard 0 before any
 * shard writes, and each script checks its partitions again, atomically with its writes.
 * A job's stored prefix is packed here (codec.ts encodeNewJob), not in Lua. The workflow
 * scripts insert their queue jobs the same way (pushInsertArgs, runInserting: workflows.ts).
 */
import type { Redis } from "ioredis";
import { queueNotFound } from "../../domain/errors.js";
import type { NewJob } from "../../domain/job-record.js";
import { encodeNewJob, text } from "./codec.js";
import type { RedisContext } from "./redis-context.js";
import { runScript, type ScriptArg, type ScriptName } from "./scripts.js";

export async function jobInsertMany(ctx: RedisContext, p: { jobs: NewJob[]; now: number }): Promise<string[]> {
  const groups = await ctx.router.groupByShard(p.jobs, (j) => j);
  if (groups.size > 1) {
    // All or nothing across shards: check every queue before any shard writes. (Each
    // script checks its partitions again, atomically with its writes.)
    const names = [...new Set(p.jobs.map((j) => j.queue))];
    const configs = await ctx.shards[0]!.hmget(ctx.keys.queues(), ...names);
    const missing = names.find((_, i) => configs[i] === null);
    if (missing !== undefined) throw queueNotFound(missing);
  }
  const ids: string[] = p.jobs.map((j) => j.id);
  await Promise.all(
    [...groups].map(async ([shard, located]) => {
      const on = ctx.keysOn(shard);
      const args: ScriptArg[] = [on.prefix];
      for (const { item } of located) pushInsertArgs(args, item, p.now);
      const notInserted = (await runInserting(shard, "job_insert_many", [on.claimChecks()], args)) as Buffer[];
      // Jobs whose idempotency key was live: their position in this call and the live job's id.
      for (let k = 0; k < notInserted.length; k += 2)
        ids[located[Number(notInserted[k]) - 1]!.index] = text(notInserted[k + 1]);
    }),
  );
  return ids;
}

/** Appends a job to insert as lua/include/insert.lua reads it: id, stored prefix, body. */
export function pushInsertArgs(args: ScriptArg[], job: NewJob, now: number): void {
  args.push(job.id, encodeNewJob(job, now), job.body);
}

/** Runs a script that inserts jobs (lua/include/insert.lua): a missing partition is the queue's not_found. */
export async function runInserting(
  shard: Redis,
  name: ScriptName,
  keys: string[],
  args: ScriptArg[],
): Promise<unknown> {
  try {
    return await runScript(shard, name, keys, args);
  } catch (err) {
    const match = /QUEUE_NOT_FOUND (\w+)/.exec(err instanceof Error ? err.message : "");
    if (match) throw queueNotFound(match[1]!);
    throw err;
  }
}
