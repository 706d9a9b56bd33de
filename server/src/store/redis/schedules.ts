/**
 * Schedules on Redis (Store.schedules, docs/workflows.md#schedules): beside the workflow
 * instances, under their hash tag {wf} (lua/include/schedules.lua lists the keys). A
 * schedule is a hash of its revision and its encoded record; a sorted set of names lists
 * them, one by next fire time answers scheduleDue. Every write is one script that checks
 * the revision it was decided on; schedule_fire.lua also inserts what the fire starts (an
 * instance with its first queue jobs, or a plain job) unless its id exists, and deletes the
 * jobs it cancels, in the same script.
 *
 * With several shards (../instance-placement.ts) a schedule lives on a shard where every
 * queue of what it starts has a partition, and its fires start their instances and jobs
 * there, in the fire's script. Reads find it by asking every shard (cached per process);
 * lists and the due schedules merge every shard's. An insert first asks every shard
 * whether the name exists and how many schedules each holds (the quota), then inserts on
 * its shard with what is left of the quota: two creates racing on different shards can
 * pass those checks together (docs/workflows.md#stores-of-several-shards).
 */
import type { Redis } from "ioredis";
import type { Schedule } from "../../domain/schedule.js";
import { decodeSchedule, encodeSchedule } from "../../domain/workflow-codec.js";
import { byCodeUnits, mergeDue, mergePages, ShardPlacement, scheduleQueues } from "../instance-placement.js";
import type { FireStart, ScheduleStore } from "../store.js";
import { joinable } from "./batch-args.js";
import { text } from "./codec.js";
import { pushInsertArgs, runInserting } from "./insert-jobs.js";
import type { RedisContext } from "./redis-context.js";
import { runScript, type ScriptArg } from "./scripts.js";
import { instanceArgs, type RedisWorkflows } from "./workflows.js";

export class RedisSchedules implements ScheduleStore {
  /** Where each schedule lives (with one shard: shard 0). */
  private readonly placement: ShardPlacement<Redis>;

  constructor(
    private readonly ctx: RedisContext,
    private readonly workflows: RedisWorkflows,
  ) {
    this.placement = new ShardPlacement(
      ctx.router,
      "schedule",
      async (shard, name) => (await shard.exists(ctx.keysOn(shard).schedule(name))) === 1,
    );
  }

  async scheduleInsert(p: { schedule: Schedule; max: number }): Promise<"inserted" | "exists" | "full"> {
    const name = p.schedule.name;
    let shard = this.shard0();
    let max = p.max;
    if (this.placement.sharded) {
      const queues = await scheduleQueues(p.schedule.target, (workflow) =>
        this.workflows.workflowGet({ name: workflow }),
      );
      // The other shards: the name must be new there too, and their schedules count for the quota.
      const placed = await this.placement.newScheduleShard(name, queues, async (other) => {
        const on = this.ctx.keysOn(other);
        const [exists, count] = await Promise.all([other.exists(on.schedule(name)), other.zcard(on.schedules())]);
        return { exists: exists === 1, count };
      });
      if (placed.existsElsewhere) return "exists";
      shard = placed.shard;
      max -= placed.elsewhere;
    }
    const on = this.ctx.keysOn(shard);
    const args = [on.prefix, max, name, ...scheduleArgs(p.schedule)];
    const reply = text(await runScript(shard, "schedule_insert", [on.schedule(name)], args));
    if (reply === "inserted") this.placement.remember(name, this.placement.indexOf(shard));
    return reply as "inserted" | "exists" | "full";
  }

  async scheduleGet(p: { name: string }): Promise<Schedule | undefined> {
    const found = await this.placement.read(
      p.name,
      async (shard) => (await shard.hget(this.ctx.keysOn(shard).schedule(p.name), "data")) ?? undefined,
    );
    return found && decodeSchedule(found.value);
  }

  async scheduleList(p: { limit: number; after?: string }): Promise<Schedule[]> {
    const pages = await Promise.all(
      this.ctx.shards.map(async (shard) => {
        const on = this.ctx.keysOn(shard);
        const args = [on.prefix, p.limit, p.after ?? ""];
        const found = (await runScript(shard, "schedule_list", [on.schedules()], args)) as Buffer[];
        return found.map((data) => decodeSchedule(text(data)));
      }),
    );
    return mergePages(pages, (a, b) => byCodeUnits(a.name, b.name), p.limit);
  }

  async scheduleReplace(p: { schedule: Schedule; rev: number }): Promise<boolean> {
    const shard = await this.placement.find(p.schedule.name);
    if (!shard) return false;
    const on = this.ctx.keysOn(shard);
    const args = [on.prefix, p.rev, p.schedule.name, ...scheduleArgs(p.schedule)];
    return (await runScript(shard, "schedule_replace", [on.schedule(p.schedule.name)], args)) === 1;
  }

  async scheduleDelete(p: { name: string }): Promise<boolean> {
    const shard = await this.placement.find(p.name);
    if (!shard) return false;
    const on = this.ctx.keysOn(shard);
    return (await runScript(shard, "schedule_delete", [on.schedule(p.name)], [on.prefix, p.name])) === 1;
  }

  async scheduleDue(p: { now: number; limit: number }): Promise<{ due: Schedule[]; nextDueAt?: number }> {
    const pages = await Promise.all(
      this.ctx.shards.map(async (shard) => {
        const on = this.ctx.keysOn(shard);
        const args = [on.prefix, p.now, p.limit];
        const [next, ...due] = (await runScript(shard, "schedule_due", [on.schedulesDue()], args)) as [
          Buffer,
          ...Buffer[],
        ];
        return {
          next: text(next) === "" ? undefined : Number(text(next)),
          due: due.map((d) => decodeSchedule(text(d))),
        };
      }),
    );
    return mergeDue(pages, p.limit);
  }

  async scheduleFire(p: Parameters<ScheduleStore["scheduleFire"]>[0]): ReturnType<ScheduleStore["scheduleFire"]> {
    const shard = await this.placement.find(p.schedule.name);
    if (!shard) return { applied: false, existed: false };
    const jobs = !p.start ? [] : "instance" in p.start ? p.start.jobs : [p.start.job];
    if (this.placement.sharded) await this.placement.checkJobs(this.placement.indexOf(shard), p.schedule.name, jobs);
    const on = this.ctx.keysOn(shard);
    const args: ScriptArg[] = [
      on.prefix,
      p.now,
      p.schedule.name,
      p.rev,
      ...scheduleArgs(p.schedule),
      p.cancel.filter(joinable).join(" "),
      ...startArgs(p.start),
    ];
    for (const job of jobs) pushInsertArgs(args, job, p.now);
    const key = on.schedule(p.schedule.name);
    const [applied, existed] = text(await runInserting(shard, "schedule_fire", [key], args)).split(" ");
    if (applied === "1" && p.start && "instance" in p.start)
      this.workflows.placement.remember(p.start.instance.id, this.placement.indexOf(shard));
    return { applied: applied === "1", existed: existed === "1" };
  }

  async schedulePartitions(p: { name: string; queues: string[] }): Promise<Map<string, number[]> | undefined> {
    if (!this.placement.sharded) return undefined;
    const shard = await this.placement.find(p.name);
    return shard && this.placement.partitionsOn(this.placement.indexOf(shard), p.name, p.queues);
  }

  private shard0(): Redis {
    return this.ctx.shards[0]!;
  }
}

/** A schedule as the schedule scripts write it (include/schedules.lua writeSchedule): rev, next_fire_at, data. */
function scheduleArgs(s: Schedule): ScriptArg[] {
  return [s.rev, s.nextFireAt, encodeSchedule(s)];
}

/** schedule_fire.lua's start arguments: kind, then the instance's id and fields ("" for a job or nothing). */
function startArgs(start: FireStart | undefined): ScriptArg[] {
  if (start && "instance" in start) return ["i", start.instance.id, ...instanceArgs(start.instance)];
  return [start ? "j" : "", "", "", "", "", "", "", ""];
}
