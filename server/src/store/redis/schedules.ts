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
 * lists and the due schedules merge every shard's. A name is unique across the shards, and
 * the quota held, by a claim in a registry on shard 0 (`{meta}:schedule-names`) taken
 * before the insert on the schedule's shard (../schedule-names.ts: the protocol, and
 * schedule_name_swap.lua, schedule_fence.lua, schedule_insert.lua its steps).
 */
import type { Redis } from "ioredis";
import type { Schedule } from "../../domain/schedule.js";
import { decodeSchedule, encodeSchedule } from "../../domain/workflow-codec.js";
import { byCodeUnits, mergeDue, mergePages, ShardPlacement } from "../instance-placement.js";
import { type NameClaim, type ScheduleNameSteps, ScheduleNames } from "../schedule-names.js";
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

  /** The names' claims on shard 0, with several shards (../schedule-names.ts). */
  readonly names: ScheduleNames;

  constructor(
    private readonly ctx: RedisContext,
    private readonly workflows: RedisWorkflows,
  ) {
    this.placement = new ShardPlacement(ctx.router, "schedule", (shard, name) => this.existsOn(shard, name));
    this.names = new ScheduleNames(
      nameSteps(
        ctx,
        (index, schedule, token) =>
          // The claims hold the quota: no bound on the shard's own count.
          this.insertOn(ctx.shards[index]!, schedule, Number.MAX_SAFE_INTEGER, token) as Promise<"inserted" | "fenced">,
      ),
    );
  }

  async scheduleInsert(p: { schedule: Schedule; max: number }): Promise<"inserted" | "exists" | "full"> {
    if (!this.placement.sharded) return orExists(await this.insertOn(this.shard0(), p.schedule, p.max, ""));
    return this.placement.insertSchedule(this.names, p, (workflow) => this.workflows.workflowGet({ name: workflow }));
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
    if (!this.placement.sharded) return this.deleteOn(this.shard0(), p.name);
    // Read where it is (not a remembered shard: a name deleted and created again elsewhere moved).
    const found = await this.placement.read(p.name, async (shard) => (await this.existsOn(shard, p.name)) || undefined);
    if (!found) return false;
    return this.names.delete(p.name, this.placement.indexOf(found.shard), () => this.deleteOn(found.shard, p.name));
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

  private async existsOn(shard: Redis, name: string): Promise<boolean> {
    return (await shard.exists(this.ctx.keysOn(shard).schedule(name))) === 1;
  }

  /** schedule_insert.lua on `shard`, under a claim's `token` ("": one shard, no claim). */
  private async insertOn(
    shard: Redis,
    schedule: Schedule,
    max: number,
    token: string,
  ): Promise<"inserted" | "exists" | "full" | "fenced"> {
    const on = this.ctx.keysOn(shard);
    const args = [on.prefix, max, schedule.name, ...scheduleArgs(schedule), token];
    return text(await runScript(shard, "schedule_insert", [on.schedule(schedule.name)], args)) as "inserted";
  }

  private async deleteOn(shard: Redis, name: string): Promise<boolean> {
    const on = this.ctx.keysOn(shard);
    return (await runScript(shard, "schedule_delete", [on.schedule(name)], [on.prefix, name])) === 1;
  }
}

/** The registry's steps (../schedule-names.ts): claims in a hash on shard 0, fences on each shard. */
function nameSteps(ctx: RedisContext, insert: ScheduleNameSteps["insert"]): ScheduleNameSteps {
  const shard0 = ctx.shards[0]!;
  const registry = ctx.keys.scheduleNames();
  return {
    async claimOf(name) {
      const held = await shard0.hget(registry, name);
      return held ? decodeClaim(held) : undefined;
    },
    async claimSwap(p) {
      const swap = [p.expected, p.next].map((claim) => (claim ? `${claim.shard} ${claim.token}` : ""));
      const args = [ctx.keys.prefix, p.name, ...swap, p.max];
      const reply = text(await runScript(shard0, "schedule_name_swap", [registry], args));
      if (reply === "done" || reply === "full") return reply;
      const held = reply.slice("changed".length).trim();
      return { changed: held === "" ? undefined : decodeClaim(held) };
    },
    async fence(index, name, token) {
      const shard = ctx.shards[index]!;
      const on = ctx.keysOn(shard);
      return text(await runScript(shard, "schedule_fence", [on.schedule(name)], [on.prefix, name, token])) as "fenced";
    },
    insert,
  };
}

/** A claim as the registry keeps it: "<shard> <token>". */
function decodeClaim(held: string): NameClaim {
  const [shard, token] = held.split(" ");
  return { shard: Number(shard), token: token! };
}

/** An insert's answer as Store.schedules gives it (a token is fenced only with several shards). */
function orExists(reply: "inserted" | "exists" | "full" | "fenced"): "inserted" | "exists" | "full" {
  return reply === "fenced" ? "exists" : reply;
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
