/**
 * Schedules on MySQL (Store.schedules, docs/workflows.md#schedules; schema: migration
 * 0009): the schedules table on the instances' shard (0), a schedule's encoded record
 * beside its revision and its next fire time (indexed, NULL for none, for scheduleDue).
 * Every write checks the revision it was decided on; scheduleFire is one transaction that
 * locks the schedule's row (FOR UPDATE, as instance-apply.ts locks an instance's), inserts
 * what the fire starts (an instance with its first queue jobs, or a plain job) unless its
 * id exists, deletes the jobs it cancels, and writes the schedule.
 *
 * As for workflows (workflows.ts), a store opened with several shards refuses schedule
 * writes (failed_precondition): what a fire starts may live on another shard. Reads still
 * answer from shard 0.
 */
import { parseJobId } from "../../domain/job-id.js";
import type { Schedule } from "../../domain/schedule.js";
import { decodeSchedule, encodeSchedule } from "../../domain/workflow-codec.js";
import type { FireStart, ScheduleStore } from "../store.js";
import { insertOnShard, lockQueues } from "./insert-jobs.js";
import { cancelJobs, noteStep } from "./instance-apply.js";
import type { MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { type Conn, type Param, run, type Shard, select } from "./shard.js";
import { instanceParams, instancesShard, storable } from "./workflows.js";

export class MysqlSchedules implements ScheduleStore {
  constructor(private readonly ctx: MysqlContext) {}

  async scheduleInsert(p: { schedule: Schedule; max: number }): Promise<"inserted" | "exists" | "full"> {
    // Every insert takes the insert lock first: the name's look, the count and the INSERT
    // see no other insert in between.
    return this.oneShard().transaction(async (c) => {
      await select(c, sql.SCHEDULE_INSERTS_LOCK);
      if ((await select(c, sql.SCHEDULE_SELECT, [p.schedule.name])).length > 0) return "exists";
      const [count] = await select<{ n: number | string }>(c, sql.SCHEDULE_COUNT);
      if (Number(count!.n) >= p.max) return "full";
      await run(c, sql.SCHEDULE_INSERT, scheduleParams(p.schedule));
      return "inserted";
    });
  }

  async scheduleGet(p: { name: string }): Promise<Schedule | undefined> {
    if (!storable(p.name)) return undefined;
    const [row] = await this.shard0().session((c) => select<ScheduleRow>(c, sql.SCHEDULE_SELECT, [p.name]));
    return row && decodeSchedule(row.schedule);
  }

  async scheduleList(p: { limit: number; after?: string }): Promise<Schedule[]> {
    // (The page token names a schedule; one the ascii column could not compare names none.)
    if (p.after !== undefined && !storable(p.after)) return [];
    const params: Param[] = p.after === undefined ? [p.limit] : [p.after, p.limit];
    const rows = await this.shard0().session((c) =>
      select<ScheduleRow>(c, sql.scheduleList(p.after !== undefined), params),
    );
    return rows.map((row) => decodeSchedule(row.schedule));
  }

  async scheduleReplace(p: { schedule: Schedule; rev: number }): Promise<boolean> {
    const shard = this.oneShard();
    if (!storable(p.schedule.name)) return false;
    return (await shard.session((c) => run(c, sql.SCHEDULE_REPLACE, [...scheduleParams(p.schedule), p.rev]))) === 1;
  }

  async scheduleDelete(p: { name: string }): Promise<boolean> {
    const shard = this.oneShard();
    if (!storable(p.name)) return false;
    return (await shard.session((c) => run(c, sql.SCHEDULE_DELETE, [p.name]))) === 1;
  }

  async scheduleDue(p: { now: number; limit: number }): Promise<{ due: Schedule[]; nextDueAt?: number }> {
    return this.shard0().session(async (c) => {
      const rows = await select<ScheduleRow>(c, sql.SCHEDULES_DUE, [p.now, p.limit]);
      const [next] = await select<{ at: number | string | null }>(c, sql.SCHEDULE_NEXT_DUE, [p.now]);
      const due = rows.map((row) => decodeSchedule(row.schedule));
      return next?.at == null ? { due } : { due, nextDueAt: Number(next.at) };
    });
  }

  async scheduleFire(p: Parameters<ScheduleStore["scheduleFire"]>[0]): ReturnType<ScheduleStore["scheduleFire"]> {
    const shard = this.oneShard();
    if (!storable(p.schedule.name)) return { applied: false, existed: false };
    const jobs = !p.start ? [] : "instance" in p.start ? p.start.jobs : [p.start.job];
    const result = await shard.transaction(async (c) => {
      const [stored] = await select<{ rev: number | string }>(c, sql.SCHEDULE_REV_LOCK, [p.schedule.name]);
      if (stored === undefined || Number(stored.rev) !== p.rev) return { applied: false, existed: false };
      const existed = p.start !== undefined && (await started(c, p.start));
      if (p.start && !existed) {
        await lockQueues(c, jobs);
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
    if (result.applied) noteStep(this.ctx, { jobs: result.existed ? [] : jobs, cancel: p.cancel });
    return result;
  }

  private shard0(): Shard {
    return this.ctx.shards[0]!;
  }

  private oneShard(): Shard {
    return instancesShard(this.ctx, "schedules");
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
