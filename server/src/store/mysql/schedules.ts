/**
 * Schedules on MySQL (Store.schedules, docs/workflows.md#schedules; schema: migration
 * 0009): the schedules table on each shard, a schedule's encoded record
 * beside its revision and its next fire time (indexed, NULL for none, for scheduleDue).
 * Every write checks the revision it was decided on; scheduleFire is one transaction that
 * locks the schedule's row (FOR UPDATE, as instance-apply.ts locks an instance's), inserts
 * what the fire starts (an instance with its first queue jobs, or a plain job) unless its
 * id exists, deletes the jobs it cancels, and writes the schedule.
 *
 * With several shards (../instance-placement.ts) a schedule lives on a shard where every
 * queue of what it starts has a partition, and its fires start their instances and jobs
 * there, in the fire's transaction (the queues' rows on shard 0 held under a shared lock
 * meanwhile, workflows.ts withQueuesLocked). Reads find it by asking every shard (cached
 * per process); lists and the due schedules merge every shard's. An insert first asks
 * every shard whether the name exists and how many schedules each holds (the quota), then
 * inserts on its shard with what is left of the quota: two creates racing on different
 * shards can pass those checks together (docs/workflows.md#stores-of-several-shards).
 */
import { parseJobId } from "../../domain/job-id.js";
import type { Schedule } from "../../domain/schedule.js";
import { decodeSchedule, encodeSchedule } from "../../domain/workflow-codec.js";
import { byCodeUnits, mergeDue, mergePages, ShardPlacement, scheduleQueues } from "../instance-placement.js";
import type { FireStart, ScheduleStore } from "../store.js";
import { insertOnShard } from "./insert-jobs.js";
import { cancelJobs, noteStep } from "./instance-apply.js";
import type { MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { type Conn, type Param, run, type Shard, select } from "./shard.js";
import { instanceParams, type MysqlWorkflows, storable, withQueuesLocked } from "./workflows.js";

export class MysqlSchedules implements ScheduleStore {
  /** Where each schedule lives (with one shard: shard 0). */
  private readonly placement: ShardPlacement<Shard>;

  constructor(
    private readonly ctx: MysqlContext,
    private readonly workflows: MysqlWorkflows,
  ) {
    this.placement = new ShardPlacement(ctx.router, "schedule", async (shard, name) =>
      shard.session((c) => select(c, sql.SCHEDULE_SELECT, [name]).then((rows) => rows.length > 0)),
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
      const placed = await this.placement.newScheduleShard(name, queues, (other) =>
        other.session(async (c) => {
          const exists = (await select(c, sql.SCHEDULE_SELECT, [name])).length > 0;
          const [count] = await select<{ n: number | string }>(c, sql.SCHEDULE_COUNT);
          return { exists, count: Number(count!.n) };
        }),
      );
      if (placed.existsElsewhere) return "exists";
      shard = placed.shard;
      max -= placed.elsewhere;
    }
    // Every insert takes the insert lock first: the name's look, the count and the INSERT
    // see no other insert in between.
    const result = await shard.transaction(async (c) => {
      await select(c, sql.SCHEDULE_INSERTS_LOCK);
      if ((await select(c, sql.SCHEDULE_SELECT, [name])).length > 0) return "exists";
      const [count] = await select<{ n: number | string }>(c, sql.SCHEDULE_COUNT);
      if (Number(count!.n) >= max) return "full";
      await run(c, sql.SCHEDULE_INSERT, scheduleParams(p.schedule));
      return "inserted";
    });
    if (result === "inserted") this.placement.remember(name, this.placement.indexOf(shard));
    return result;
  }

  async scheduleGet(p: { name: string }): Promise<Schedule | undefined> {
    if (!storable(p.name)) return undefined;
    const found = await this.placement.read(p.name, async (shard) => {
      const [row] = await shard.session((c) => select<ScheduleRow>(c, sql.SCHEDULE_SELECT, [p.name]));
      return row?.schedule;
    });
    return found && decodeSchedule(found.value);
  }

  async scheduleList(p: { limit: number; after?: string }): Promise<Schedule[]> {
    // (The page token names a schedule; one the ascii column could not compare names none.)
    if (p.after !== undefined && !storable(p.after)) return [];
    const params: Param[] = p.after === undefined ? [p.limit] : [p.after, p.limit];
    const pages = await Promise.all(
      this.ctx.shards.map(async (shard) =>
        (await shard.session((c) => select<ScheduleRow>(c, sql.scheduleList(p.after !== undefined), params))).map(
          (row) => decodeSchedule(row.schedule),
        ),
      ),
    );
    return mergePages(pages, (a, b) => byCodeUnits(a.name, b.name), p.limit);
  }

  async scheduleReplace(p: { schedule: Schedule; rev: number }): Promise<boolean> {
    if (!storable(p.schedule.name)) return false;
    const shard = await this.placement.find(p.schedule.name);
    if (!shard) return false;
    return (await shard.session((c) => run(c, sql.SCHEDULE_REPLACE, [...scheduleParams(p.schedule), p.rev]))) === 1;
  }

  async scheduleDelete(p: { name: string }): Promise<boolean> {
    if (!storable(p.name)) return false;
    const shard = await this.placement.find(p.name);
    if (!shard) return false;
    return (await shard.session((c) => run(c, sql.SCHEDULE_DELETE, [p.name]))) === 1;
  }

  async scheduleDue(p: { now: number; limit: number }): Promise<{ due: Schedule[]; nextDueAt?: number }> {
    const pages = await Promise.all(
      this.ctx.shards.map((shard) =>
        shard.session(async (c) => {
          const rows = await select<ScheduleRow>(c, sql.SCHEDULES_DUE, [p.now, p.limit]);
          const [next] = await select<{ at: number | string | null }>(c, sql.SCHEDULE_NEXT_DUE, [p.now]);
          const due = rows.map((row) => decodeSchedule(row.schedule));
          return { due, next: next?.at == null ? undefined : Number(next.at) };
        }),
      ),
    );
    return mergeDue(pages, p.limit);
  }

  async scheduleFire(p: Parameters<ScheduleStore["scheduleFire"]>[0]): ReturnType<ScheduleStore["scheduleFire"]> {
    if (!storable(p.schedule.name)) return { applied: false, existed: false };
    const shard = await this.placement.find(p.schedule.name);
    if (!shard) return { applied: false, existed: false };
    const jobs = !p.start ? [] : "instance" in p.start ? p.start.jobs : [p.start.job];
    if (this.placement.sharded) await this.placement.checkJobs(this.placement.indexOf(shard), p.schedule.name, jobs);
    const result = await withQueuesLocked(this.ctx, shard, jobs, async (c, lock) => {
      const [stored] = await select<{ rev: number | string }>(c, sql.SCHEDULE_REV_LOCK, [p.schedule.name]);
      if (stored === undefined || Number(stored.rev) !== p.rev) return { applied: false, existed: false };
      const existed = p.start !== undefined && (await started(c, p.start));
      if (p.start && !existed) {
        await lock();
        await insertOnShard(
          c,
          jobs.map((item, index) => ({ item, index })),
          p.now,
          false,
        );
        if ("instance" in p.start) await run(c, sql.INSTANCE_INSERT, instanceParams(p.start.instance));
      }
      await cancelJobs(c, p.cancel, p.now);
      await run(c, sql.SCHEDULE_REPLACE, [...scheduleParams(p.schedule), p.rev]);
      return { applied: true, existed };
    });
    if (result.applied && p.start && "instance" in p.start)
      this.workflows.placement.remember(p.start.instance.id, this.placement.indexOf(shard));
    if (result.applied) noteStep(this.ctx, { jobs: result.existed ? [] : jobs, cancel: p.cancel });
    return result;
  }

  async schedulePartitions(p: { name: string; queues: string[] }): Promise<Map<string, number[]> | undefined> {
    if (!this.placement.sharded || !storable(p.name)) return undefined;
    const shard = await this.placement.find(p.name);
    return shard && this.placement.partitionsOn(this.placement.indexOf(shard), p.name, p.queues);
  }

  private shard0(): Shard {
    return this.ctx.shards[0]!;
  }
}

interface ScheduleRow {
  schedule: string;
}

/** Whether what a fire starts exists already (an earlier try of this fire started it). */
async function started(c: Conn, start: FireStart): Promise<boolean> {
  if ("instance" in start) return (await select(c, sql.INSTANCE_REV_LOCK, [start.instance.id])).length > 0;
  return parseJobId(start.job.id) !== undefined && (await select(c, sql.JOB_EXISTS, [start.job.id])).length > 0;
}

/** A schedule's SCHEDULE_INSERT values (SCHEDULE_REPLACE's too): next_fire_at NULL for none. */
function scheduleParams(s: Schedule): Param[] {
  return [s.rev, s.nextFireAt === 0 ? null : s.nextFireAt, encodeSchedule(s), s.name];
}
