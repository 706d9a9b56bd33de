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
 * per process); lists and the due schedules merge every shard's. A name is unique across
 * the shards, and the quota held, by a claim in schedule_names on shard 0 taken before the
 * insert on the schedule's shard (../schedule-names.ts; migration 0011).
 */
import { parseJobId } from "../../domain/job-id.js";
import type { Schedule } from "../../domain/schedule.js";
import { decodeSchedule, encodeSchedule } from "../../domain/workflow-codec.js";
import { byCodeUnits, mergeDue, mergePages, ShardPlacement } from "../instance-placement.js";
import { type NameClaim, type ScheduleNameSteps, ScheduleNames } from "../schedule-names.js";
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

  /** The names' claims on shard 0, with several shards (../schedule-names.ts). */
  readonly names: ScheduleNames;

  constructor(
    private readonly ctx: MysqlContext,
    private readonly workflows: MysqlWorkflows,
  ) {
    this.placement = new ShardPlacement(ctx.router, "schedule", existsOn);
    this.names = new ScheduleNames(nameSteps(ctx));
  }

  async scheduleInsert(p: { schedule: Schedule; max: number }): Promise<"inserted" | "exists" | "full"> {
    if (!this.placement.sharded) {
      const reply = await insertOn(this.shard0(), p.schedule, p.max, undefined);
      return reply === "fenced" ? "exists" : reply;
    }
    return this.placement.insertSchedule(this.names, p, (workflow) => this.workflows.workflowGet({ name: workflow }));
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
    if (!this.placement.sharded) return deleteOn(this.shard0(), p.name);
    // Read where it is (not a remembered shard: a name deleted and created again elsewhere moved).
    const found = await this.placement.read(p.name, async (shard) => (await existsOn(shard, p.name)) || undefined);
    if (!found) return false;
    return this.names.delete(p.name, this.placement.indexOf(found.shard), () => deleteOn(found.shard, p.name));
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

function existsOn(shard: Shard, name: string): Promise<boolean> {
  return shard.session((c) => select(c, sql.SCHEDULE_SELECT, [name]).then((rows) => rows.length > 0));
}

function deleteOn(shard: Shard, name: string): Promise<boolean> {
  return shard.session((c) => run(c, sql.SCHEDULE_DELETE, [name])).then((deleted) => deleted === 1);
}

/**
 * A new schedule on `shard`, under a claim's `token` (undefined: one shard, no claim). Every
 * insert (and fence) takes the insert lock first: the fence's look, the name's look, the
 * count and the INSERT see no other insert in between.
 */
function insertOn(
  shard: Shard,
  schedule: Schedule,
  max: number,
  token: string | undefined,
): Promise<"inserted" | "exists" | "full" | "fenced"> {
  return shard.transaction(async (c) => {
    await select(c, sql.SCHEDULE_INSERTS_LOCK);
    if (token !== undefined && (await run(c, sql.SCHEDULE_FENCE_DELETE, [token])) === 1) return "fenced";
    if ((await select(c, sql.SCHEDULE_SELECT, [schedule.name])).length > 0) return "exists";
    const [count] = await select<{ n: number | string }>(c, sql.SCHEDULE_COUNT);
    if (Number(count!.n) >= max) return "full";
    await run(c, sql.SCHEDULE_INSERT, scheduleParams(schedule));
    return "inserted";
  });
}

/**
 * The registry's steps (../schedule-names.ts): claims in schedule_names on shard 0, fences
 * in schedule_fences on each shard, each under the insert lock of its shard (so a claim's
 * count of claims holds, and a fence and an insert see each other).
 */
function nameSteps(ctx: MysqlContext): ScheduleNameSteps {
  const shard0 = ctx.shards[0]!;
  const same = (a: NameClaim | undefined, b: NameClaim | undefined) => a?.shard === b?.shard && a?.token === b?.token;
  const held = async (c: Conn, name: string): Promise<NameClaim | undefined> => {
    const [row] = await select<{ shard: number | string; token: string }>(c, sql.SCHEDULE_NAME_SELECT, [name]);
    return row && { shard: Number(row.shard), token: row.token };
  };
  return {
    claimOf: (name) => shard0.session((c) => held(c, name)),
    claimSwap: (p) =>
      shard0.transaction(async (c) => {
        await select(c, sql.SCHEDULE_INSERTS_LOCK);
        const now = await held(c, p.name);
        if (!same(now, p.expected)) return { changed: now };
        if (!p.next) {
          await run(c, sql.SCHEDULE_NAME_DELETE, [p.name]);
          return "done";
        }
        if (now) {
          await run(c, sql.SCHEDULE_NAME_UPDATE, [p.next.shard, p.next.token, p.name]);
          return "done";
        }
        const [count] = await select<{ n: number | string }>(c, sql.SCHEDULE_NAME_COUNT);
        if (Number(count!.n) >= p.max) return "full";
        await run(c, sql.SCHEDULE_NAME_INSERT, [p.next.shard, p.next.token, p.name]);
        return "done";
      }),
    fence: (index, name, token) =>
      ctx.shards[index]!.transaction(async (c) => {
        await select(c, sql.SCHEDULE_INSERTS_LOCK);
        if ((await select(c, sql.SCHEDULE_SELECT, [name])).length > 0) return "exists";
        await run(c, sql.SCHEDULE_FENCE_INSERT, [token]);
        return "fenced";
      }),
    // The claims hold the quota: no bound on the shard's own count.
    insert: (index, schedule, token) =>
      insertOn(ctx.shards[index]!, schedule, Number.MAX_SAFE_INTEGER, token) as Promise<
        "inserted" | "exists" | "fenced"
      >,
  };
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
