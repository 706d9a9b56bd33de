/**
 * Schedules on Redis (Store.schedules, docs/workflows.md#schedules): beside the workflow
 * instances, under their hash tag {wf} on the instances' shard (lua/include/schedules.lua
 * lists the keys). A schedule is a hash of its revision and its encoded record; a sorted
 * set of names lists them, one by next fire time answers scheduleDue. Every write is one
 * script that checks the revision it was decided on; schedule_fire.lua also inserts what
 * the fire starts (an instance with its first queue jobs, or a plain job) unless its id
 * exists, and deletes the jobs it cancels, in the same script.
 *
 * As for workflows (workflows.ts), a store opened with several shards refuses schedule
 * writes (failed_precondition): what a fire starts may live on another shard. Reads still
 * answer from shard 0.
 */
import type { Redis } from "ioredis";
import type { Schedule } from "../../domain/schedule.js";
import { decodeSchedule, encodeSchedule } from "../../domain/workflow-codec.js";
import type { FireStart, ScheduleStore } from "../store.js";
import { joinable } from "./batch-args.js";
import { text } from "./codec.js";
import { pushInsertArgs, runInserting } from "./insert-jobs.js";
import type { RedisContext } from "./redis-context.js";
import { runScript, type ScriptArg } from "./scripts.js";
import { instanceArgs, instancesShard } from "./workflows.js";

export class RedisSchedules implements ScheduleStore {
  constructor(private readonly ctx: RedisContext) {}

  async scheduleInsert(p: { schedule: Schedule; max: number }): Promise<"inserted" | "exists" | "full"> {
    const args = [this.ctx.keys.prefix, p.max, p.schedule.name, ...scheduleArgs(p.schedule)];
    const reply = await runScript(this.oneShard(), "schedule_insert", [this.key(p.schedule.name)], args);
    return text(reply) as "inserted" | "exists" | "full";
  }

  async scheduleGet(p: { name: string }): Promise<Schedule | undefined> {
    const data = await this.shard0().hget(this.key(p.name), "data");
    return data === null ? undefined : decodeSchedule(data);
  }

  async scheduleList(p: { limit: number; after?: string }): Promise<Schedule[]> {
    const args = [this.ctx.keys.prefix, p.limit, p.after ?? ""];
    const found = (await runScript(this.shard0(), "schedule_list", [this.ctx.keys.schedules()], args)) as Buffer[];
    return found.map((data) => decodeSchedule(text(data)));
  }

  async scheduleReplace(p: { schedule: Schedule; rev: number }): Promise<boolean> {
    const args = [this.ctx.keys.prefix, p.rev, p.schedule.name, ...scheduleArgs(p.schedule)];
    return (await runScript(this.oneShard(), "schedule_replace", [this.key(p.schedule.name)], args)) === 1;
  }

  async scheduleDelete(p: { name: string }): Promise<boolean> {
    const args = [this.ctx.keys.prefix, p.name];
    return (await runScript(this.oneShard(), "schedule_delete", [this.key(p.name)], args)) === 1;
  }

  async scheduleDue(p: { now: number; limit: number }): Promise<{ due: Schedule[]; nextDueAt?: number }> {
    const args = [this.ctx.keys.prefix, p.now, p.limit];
    const [next, ...due] = (await runScript(this.shard0(), "schedule_due", [this.ctx.keys.schedulesDue()], args)) as [
      Buffer,
      ...Buffer[],
    ];
    const schedules = due.map((data) => decodeSchedule(text(data)));
    return text(next) === "" ? { due: schedules } : { due: schedules, nextDueAt: Number(text(next)) };
  }

  async scheduleFire(p: Parameters<ScheduleStore["scheduleFire"]>[0]): ReturnType<ScheduleStore["scheduleFire"]> {
    const args: ScriptArg[] = [
      this.ctx.keys.prefix,
      p.now,
      p.schedule.name,
      p.rev,
      ...scheduleArgs(p.schedule),
      p.cancel.filter(joinable).join(" "),
      ...startArgs(p.start),
    ];
    if (p.start && "instance" in p.start) for (const job of p.start.jobs) pushInsertArgs(args, job, p.now);
    else if (p.start) pushInsertArgs(args, p.start.job, p.now);
    const key = this.key(p.schedule.name);
    const [applied, existed] = text(await runInserting(this.oneShard(), "schedule_fire", [key], args)).split(" ");
    return { applied: applied === "1", existed: existed === "1" };
  }

  private key(name: string): string {
    return this.ctx.keys.schedule(name);
  }

  private shard0(): Redis {
    return this.ctx.shards[0]!;
  }

  private oneShard(): Redis {
    return instancesShard(this.ctx, "schedules");
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
