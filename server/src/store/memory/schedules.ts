/**
 * Schedules in memory (Store.schedules, docs/workflows.md#schedules): by name. A fire
 * (scheduleFire) is one synchronous step over the schedule, what it starts and what it
 * cancels: nothing else runs between its checks and its writes. Records go in and out as
 * copies.
 */
import type { Schedule } from "../../domain/schedule.js";
import type { FireStart, ScheduleStore } from "../store.js";
import { insertJobs } from "./insert-jobs.js";
import type { MemoryState } from "./memory-state.js";
import { cancelJobs, type MemoryWorkflows } from "./workflows.js";

export class MemorySchedules implements ScheduleStore {
  private readonly schedules = new Map<string, Schedule>();

  constructor(
    private readonly state: MemoryState,
    private readonly workflows: MemoryWorkflows,
  ) {}

  async scheduleInsert(p: { schedule: Schedule; max: number }): Promise<"inserted" | "exists" | "full"> {
    if (this.schedules.has(p.schedule.name)) return "exists";
    if (this.schedules.size >= p.max) return "full";
    this.schedules.set(p.schedule.name, structuredClone(p.schedule));
    return "inserted";
  }

  async scheduleGet(p: { name: string }): Promise<Schedule | undefined> {
    const found = this.schedules.get(p.name);
    return found && structuredClone(found);
  }

  async scheduleList(p: { limit: number; after?: string }): Promise<Schedule[]> {
    const after = p.after;
    return [...this.schedules.keys()]
      .filter((name) => after === undefined || name > after)
      .sort()
      .slice(0, p.limit)
      .map((name) => structuredClone(this.schedules.get(name)!));
  }

  async scheduleReplace(p: { schedule: Schedule; rev: number }): Promise<boolean> {
    if (this.schedules.get(p.schedule.name)?.rev !== p.rev) return false;
    this.schedules.set(p.schedule.name, structuredClone(p.schedule));
    return true;
  }

  async scheduleDelete(p: { name: string }): Promise<boolean> {
    return this.schedules.delete(p.name);
  }

  async scheduleDue(p: { now: number; limit: number }): Promise<{ due: Schedule[]; nextDueAt?: number }> {
    const all = [...this.schedules.values()].filter((s) => s.nextFireAt !== 0);
    const due = all
      .filter((s) => s.nextFireAt <= p.now)
      .sort((a, b) => a.nextFireAt - b.nextFireAt || (a.name < b.name ? -1 : 1))
      .slice(0, p.limit)
      .map((s) => structuredClone(s));
    const later = all.filter((s) => s.nextFireAt > p.now).map((s) => s.nextFireAt);
    return later.length > 0 ? { due, nextDueAt: Math.min(...later) } : { due };
  }

  async scheduleFire(p: {
    rev: number;
    schedule: Schedule;
    start?: FireStart;
    cancel: string[];
    now: number;
  }): Promise<{ applied: boolean; existed: boolean }> {
    if (this.schedules.get(p.schedule.name)?.rev !== p.rev) return { applied: false, existed: false };
    // One synchronous step from the check above to the last write (no await in between).
    let existed = false;
    if (p.start && "instance" in p.start) {
      // Throws before writing anything if a queue is gone.
      existed = !this.workflows.insertInstance({ instance: p.start.instance, jobs: p.start.jobs, now: p.now });
    } else if (p.start) {
      existed = this.state.jobs.has(p.start.job.id);
      if (!existed) insertJobs(this.state, { jobs: [p.start.job], now: p.now });
    }
    cancelJobs(this.state, p.cancel, p.now);
    this.schedules.set(p.schedule.name, structuredClone(p.schedule));
    return { applied: true, existed };
  }
}
