/**
 * Schedules on the engine (docs/workflows.md#schedules): create, change, pause, resume,
 * delete, read, and fire. Every change is decided by domain/schedule-transitions.ts on the
 * schedule as read and written by the store only over that revision. A fire is recorded in
 * the same store step as what it starts (Store.schedules.scheduleFire), whose id is derived
 * from (schedule, fire time): two nodes that fire the same time at once start it once, and
 * a crash before the step leaves the time due, to fire on the next pass.
 */
import type { Clock } from "../domain/clock.js";
import { invalidArgument, RunlaterError } from "../domain/errors.js";
import { parseJobId } from "../domain/job-id.js";
import type { NewJob } from "../domain/job-record.js";
import { limits } from "../domain/limits.js";
import { storedOrderingKey } from "../domain/ordering.js";
import type { QueueConfig } from "../domain/queue-config.js";
import { fireInstanceId, fireJobUnique, type Schedule, type ScheduleSpec, withDefaults } from "../domain/schedule.js";
import {
  createSchedule,
  type FirePlan,
  fireFailed,
  isDue,
  pauseSchedule,
  planFire,
  resumeSchedule,
  updateSchedule,
} from "../domain/schedule-transitions.js";
import { externalInputs } from "../domain/workflow-definition.js";
import type { FireStart, ScheduleStore, Store } from "../store/store.js";
import type { Dispatch } from "./dispatch.js";
import { announceInserted } from "./due-announcements.js";
import type { PartitionPicker } from "./partition-picker.js";
import type { QueueCache } from "./queue-cache.js";
import { unsupported, type Workflows, workflowQueues } from "./workflows.js";

/** How often a change is decided again after losing to a concurrent one before giving up. */
const CONFLICT_RETRIES = 50;

export interface SchedulesOptions {
  store: Store;
  clock: Clock;
  broker: Dispatch;
  queues: QueueCache;
  partitions: PartitionPicker;
  workflows: Workflows;
}

/** What one fire did (the leader's pass counts them). */
export type FireResult = "started" | "skipped" | "missed" | "failed" | "not_due";

export class Schedules {
  constructor(private readonly o: SchedulesOptions) {}

  // ---- definitions

  /** Creates a schedule; an existing one of that name is returned unchanged (created false). */
  async create(input: ScheduleSpec, paused: boolean): Promise<{ schedule: Schedule; created: boolean }> {
    const ss = this.store();
    const spec = withDefaults(input);
    const schedule = createSchedule(spec, { now: this.o.clock.now(), paused });
    await this.checkTarget(spec);
    for (let tries = 0; tries < CONFLICT_RETRIES; tries++) {
      const res = await ss.scheduleInsert({ schedule, max: limits.schedulesMax });
      if (res === "full") {
        throw new RunlaterError(
          "resource_exhausted",
          "UNSPECIFIED",
          `this server keeps at most ${limits.schedulesMax} schedules; delete one first (runlater schedule delete NAME)`,
          "schedule",
        );
      }
      if (res === "inserted") return { schedule, created: true };
      // "exists" with nothing to read: on a store of several shards, another create of the
      // name between its claim and its insert, or one that crashed there, or one deleted
      // meanwhile. Inserting again takes such a claim over (store/schedule-names.ts).
      const existing = await ss.scheduleGet({ name: spec.name });
      if (existing) return { schedule: existing, created: false };
    }
    throw new RunlaterError("unavailable", "CONFLICT", `schedule ${spec.name} kept being created and deleted; retry`);
  }

  /** Replaces a schedule's definition; a new cron or time zone counts from now. */
  update(input: ScheduleSpec): Promise<Schedule> {
    const spec = withDefaults(input);
    return this.change(spec.name, async (current, now) => {
      await this.checkTarget(spec);
      // On a store of several shards the schedule stays where it is: its new target's
      // queues must have partitions there (the store says which, or why not).
      await this.store().schedulePartitions?.({ name: spec.name, queues: await this.targetQueues(spec) });
      return updateSchedule(current, spec, { now });
    });
  }

  pause(name: string): Promise<Schedule> {
    return this.change(name, async (current, now) => pauseSchedule(current, { now }));
  }

  resume(name: string): Promise<Schedule> {
    return this.change(name, async (current, now) => resumeSchedule(current, { now }));
  }

  delete(name: string): Promise<boolean> {
    return this.store().scheduleDelete({ name });
  }

  async get(name: string): Promise<Schedule> {
    const found = await this.store().scheduleGet({ name });
    if (!found) throw scheduleNotFound(name);
    return found;
  }

  list(p: { limit: number; after?: string }): Promise<Schedule[]> {
    return this.store().scheduleList(p);
  }

  /** Whether the store keeps schedules (the other methods refuse with UNSUPPORTED otherwise). */
  kept(): boolean {
    return this.o.store.schedules !== undefined;
  }

  // ---- fires

  /**
   * Fires every due schedule, `limit` at a time (the maintenance leader calls this); returns
   * how many fires started something and when the next schedule is due. One schedule's
   * failure does not hold the others: it is returned in `errors`, and its time stays due.
   */
  async fireDue(limit: number): Promise<{ started: number; nextDueAt?: number; errors: unknown[] }> {
    const ss = this.o.store.schedules;
    if (!ss) return { started: 0, errors: [] };
    let started = 0;
    const errors: unknown[] = [];
    for (;;) {
      const { due, nextDueAt } = await ss.scheduleDue({ now: this.o.clock.now(), limit });
      let progress = false;
      for (const s of due) {
        try {
          const result = await this.fire(s);
          if (result === "started") started++;
          progress = true;
        } catch (err) {
          errors.push(err);
        }
      }
      if (due.length < limit || !progress) return { started, nextDueAt, errors };
    }
  }

  /** Fires one due schedule, deciding again while a concurrent change wins. */
  async fire(schedule: Schedule): Promise<FireResult> {
    const ss = this.store();
    let s: Schedule | undefined = schedule;
    for (let tries = 0; tries < CONFLICT_RETRIES && s; tries++) {
      const now = this.o.clock.now();
      if (!isDue(s, now)) return "not_due";
      const target = await this.prepare(s);
      const plan = planFire(s, {
        now,
        previousRunning: await this.stillRuns(s.lastStarted),
        idFor: (at) => this.idFor(s!, at, target),
      })!;
      let start: FireStart | undefined;
      let cancel: string[] = [];
      let next = plan.schedule;
      if (plan.action === "start") {
        try {
          if (typeof target === "string") throw new RunlaterError("failed_precondition", "UNSPECIFIED", target);
          if (plan.cancel !== "") cancel = await this.cancelPrevious(plan.cancel);
          start = await this.startOf(s, plan, target, now);
        } catch (err) {
          if (!(err instanceof RunlaterError)) throw err;
          next = fireFailed(s, plan, err.message, { now });
          start = undefined;
        }
      }
      const res = await this.applyFire(ss, s, next, start, cancel, now);
      if (res === "refused") {
        // What it starts could not be inserted (its queue went away meanwhile): record that.
        const failed = fireFailed(s, plan, "its queue was deleted", { now });
        if ((await this.applyFire(ss, s, failed, undefined, [], now)) === "applied") return "failed";
      } else if (res === "applied") {
        if (start) announceInserted(this.o.broker, "job" in start ? [start.job] : start.jobs);
        return next.history.at(-1)?.outcome === "failed" ? "failed" : outcomeOf(plan);
      }
      s = await ss.scheduleGet({ name: schedule.name });
    }
    if (!s) return "not_due"; // deleted meanwhile
    throw new RunlaterError("unavailable", "CONFLICT", `schedule ${schedule.name} kept changing while it fired`);
  }

  // ---- internals

  private store(): ScheduleStore {
    const ss = this.o.store.schedules;
    if (!ss) throw unsupported(this.o.store.name, "schedules");
    return ss;
  }

  /** Decides and writes a change to a schedule, again while a concurrent change wins. */
  private async change(name: string, decide: (current: Schedule, now: number) => Promise<Schedule>): Promise<Schedule> {
    for (let tries = 0; tries < CONFLICT_RETRIES; tries++) {
      const current = await this.get(name);
      const next = await decide(current, this.o.clock.now());
      if (next === current) return current;
      if (await this.store().scheduleReplace({ schedule: next, rev: current.rev })) return next;
    }
    throw new RunlaterError("unavailable", "CONFLICT", `schedule ${name} kept changing under this call; retry`);
  }

  /** The target must exist when a schedule is made or changed (a fire that finds it gone is recorded as failed). */
  private async checkTarget(spec: ScheduleSpec): Promise<void> {
    const target = spec.target;
    if (target.kind === "job") {
      const { config } = await this.o.queues.get(target.queue, "schedule.job.queue");
      if (target.body.length > config.maxBodyBytes) {
        throw invalidArgument(
          "schedule.job.body",
          `body is ${target.body.length} bytes; queue ${target.queue} takes at most ${config.maxBodyBytes}`,
        );
      }
      if (target.priority > config.priorities) {
        throw invalidArgument(
          "schedule.job.priority",
          `priority ${target.priority} is past queue ${target.queue}'s ${config.priorities} priorities`,
        );
      }
      return;
    }
    const { def } = await this.o.workflows.get(target.workflow);
    const inputs = externalInputs(def);
    for (const [i, e] of target.events.entries()) {
      if (!inputs.has(e.input)) {
        throw invalidArgument(
          `schedule.workflow.events[${i}].input`,
          `workflow ${def.name} v${def.version} has no external input "${e.input}"`,
        );
      }
    }
  }

  /** The queues what a schedule starts enqueues on. */
  private async targetQueues(spec: ScheduleSpec): Promise<string[]> {
    if (spec.target.kind === "job") return [spec.target.queue];
    return workflowQueues((await this.o.workflows.get(spec.target.workflow)).def);
  }

  /**
   * What a job target needs to name its job (its queue's config, and on a store of several
   * shards the partitions on the schedule's shard), or why the target cannot be fired.
   */
  private async prepare(s: Schedule): Promise<JobTarget | undefined | string> {
    if (s.target.kind === "workflow") return undefined;
    try {
      const { config } = await this.o.queues.get(s.target.queue, "schedule.job.queue");
      const allowed = await this.store().schedulePartitions?.({ name: s.name, queues: [s.target.queue] });
      return { config, partitions: allowed?.get(s.target.queue) };
    } catch (err) {
      if (err instanceof RunlaterError) return err.message;
      throw err;
    }
  }

  /** Whether what a fire started (an instance or a job, by id) still runs. */
  private async stillRuns(id: string): Promise<boolean> {
    if (id === "") return false;
    if (parseJobId(id)) {
      const [job] = await this.o.store.jobGetMany({ ids: [id], bodies: false });
      return job !== undefined && job.state !== "succeeded" && job.state !== "failed";
    }
    const instance = await this.o.store.workflows?.instanceGet({ id });
    return instance?.state === "running";
  }

  /** Cancels the previous run under cancel_previous: an instance now (its own step), a job in the fire's step. */
  private async cancelPrevious(id: string): Promise<string[]> {
    if (parseJobId(id)) return [id];
    try {
      await this.o.workflows.cancel(id);
    } catch (err) {
      if (!(err instanceof RunlaterError && err.reason === "INSTANCE_NOT_FOUND")) throw err;
    }
    return [];
  }

  private async startOf(s: Schedule, plan: FirePlan, prepared: JobTarget | undefined, now: number): Promise<FireStart> {
    const target = s.target;
    if (target.kind === "workflow") {
      return this.o.workflows.planStart({
        workflow: target.workflow,
        events: target.events,
        keepOpen: target.keepOpen,
        id: plan.startedId,
        now,
        // Beside the schedule, so the fire's one step reaches it.
        place: async (queues) => this.store().schedulePartitions?.({ name: s.name, queues }),
      });
    }
    const config = prepared!.config;
    const where = parseJobId(plan.startedId)!;
    const job: NewJob = {
      id: plan.startedId,
      queue: target.queue,
      partition: where.partition,
      priority: Math.min(target.priority || 1, config!.priorities),
      body: target.body,
      runAfter: now,
      attemptsAllowed: target.attemptsAllowed || config!.defaultAttemptsAllowed,
      customStatus: "",
      createdAt: now,
      idempotencyKey: "",
      orderingKey: storedOrderingKey("", config!, "schedule.job"),
    };
    if (job.body.length > config!.maxBodyBytes)
      throw invalidArgument("schedule.job.body", `body is past queue ${target.queue}'s max_body_bytes`);
    return { job };
  }

  /** The id of what a fire at `at` starts: an instance id, or a job id on a partition fixed by the schedule's name. */
  private idFor(s: Schedule, at: number, target: JobTarget | undefined | string): string {
    if (s.target.kind === "workflow") return fireInstanceId(s.name, at);
    const key = `schedule:${s.name}`;
    const partition =
      typeof target !== "object"
        ? 0
        : target.partitions
          ? this.o.partitions.pickAmongByKey(key, target.partitions, target.config)
          : this.o.partitions.pick(s.target.queue, key, target.config);
    return `${s.target.queue}.${partition}.${fireJobUnique(s.name, at)}`;
  }

  private async applyFire(
    ss: ScheduleStore,
    s: Schedule,
    next: Schedule,
    start: FireStart | undefined,
    cancel: string[],
    now: number,
  ): Promise<"applied" | "conflict" | "refused"> {
    try {
      const res = await ss.scheduleFire({ rev: s.rev, schedule: next, start, cancel, now });
      return res.applied ? "applied" : "conflict";
    } catch (err) {
      if (err instanceof RunlaterError && start) return "refused";
      throw err;
    }
  }
}

/** What a fire of a plain job needs: its queue's config, and the partitions it may use (undefined: any). */
interface JobTarget {
  config: QueueConfig;
  partitions?: number[];
}

function outcomeOf(plan: FirePlan): FireResult {
  return plan.action === "start" ? "started" : plan.action === "skip" ? "skipped" : "missed";
}

function scheduleNotFound(name: string): RunlaterError {
  return new RunlaterError(
    "not_found",
    "UNSPECIFIED",
    `schedule "${name}" does not exist; create it with CreateSchedule (CLI: runlater schedule create ${name} …)`,
    "name",
  );
}
