/**
 * Store.schedules (docs/workflows.md#schedules): what every store that keeps schedules
 * must do. The domain decides every field; these cases pin what the store applies, and
 * that a fire is applied atomically with what it starts, over the revision it was decided on.
 */
import { describe, expect, it } from "vitest";
import { fireInstanceId, type Schedule } from "../../src/domain/schedule.js";
import { createSchedule } from "../../src/domain/schedule-transitions.js";
import { encodeJobContext } from "../../src/domain/workflow-codec.js";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { startInstance } from "../../src/domain/workflow-transitions.js";
import type { ScheduleStore, Store } from "../../src/store/store.js";
import { createQueue, get, handOut, insert, newJob, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

let counter = 0;
const YEAR = 365 * 86_400_000;

/** A schedule with a fresh name, due at `nextFireAt`. */
function schedule(nextFireAt: number, over: Partial<Schedule> = {}): Schedule {
  const s = createSchedule(
    {
      name: `s${process.pid}_${++counter}`,
      cron: "0 * * * *",
      timeZone: "UTC",
      target: { kind: "workflow", workflow: "w", events: [], keepOpen: false },
      overlap: "allow",
      catchUp: "none",
      catchUpWindowMs: 0,
    },
    { now: T0, paused: false },
  );
  return { ...s, nextFireAt, ...over };
}

const fired = (s: Schedule, started: string): Schedule => ({
  ...s,
  rev: s.rev + 1,
  nextFireAt: s.nextFireAt + 3_600_000,
  lastStarted: started,
  fires: s.fires + 1,
  history: [...s.history, { outcome: "started", at: s.nextFireAt, firedAt: s.nextFireAt, started }],
});

function definition(queue: string): WorkflowDef {
  return {
    name: `wf${process.pid}_${++counter}`,
    version: 1,
    jobs: [
      { name: "a", queue, inputs: [], onFailure: "abort", body: new Uint8Array([1]), priority: 0, attemptsAllowed: 0 },
    ],
  };
}

/**
 * A schedule's target on `queue` (a plain job): a store of several shards keeps the
 * schedule beside its queue, where the fires below insert their jobs (partition 0 of a
 * queue of one partition).
 */
function besideQueue(queue: string): Partial<Schedule> {
  return { target: { kind: "job", queue, body: new Uint8Array(), priority: 0, attemptsAllowed: 0 } };
}

/** The instance a fire of `s` at its next time starts, with its first queue job. */
function start(s: Schedule, queue: string) {
  const id = fireInstanceId(s.name, s.nextFireAt);
  const t = startInstance(definition(queue), { id, now: T0, keepOpen: false, external: [] }, () => "");
  const job = newJob(queue, {
    workflow: encodeJobContext({ workflow: "w", version: 1, instanceId: id, job: "a", run: 1, triggeredBy: [] }),
  });
  t.instance.jobs.a!.runs[0]!.queueJobId = job.id;
  return { instance: t.instance, jobs: [job] };
}

export function exerciseSchedules(open: OpenStore): void {
  async function setup(): Promise<{ store: Store; ss: ScheduleStore; queue: string }> {
    const store = await open();
    if (!store.schedules) throw new Error(`the ${store.name} store offers no Store.schedules`);
    return { store, ss: store.schedules, queue: await createQueue(store) };
  }

  describe("scheduleInsert / scheduleGet / scheduleList / scheduleReplace / scheduleDelete", () => {
    it("inserts once by name, lists by name from a cursor, replaces over the revision only", async () => {
      const { ss } = await setup();
      const a = schedule(T0 + 1);
      const b = schedule(T0 + 2);
      expect(await ss.scheduleInsert({ schedule: a, max: 1_000_000 })).toBe("inserted");
      expect(await ss.scheduleInsert({ schedule: b, max: 1_000_000 })).toBe("inserted");
      expect(await ss.scheduleInsert({ schedule: { ...a, cron: "* * * * *" }, max: 1_000_000 })).toBe("exists");
      expect(await ss.scheduleGet({ name: a.name })).toEqual(a);
      expect(await ss.scheduleGet({ name: "nope" })).toBeUndefined();
      const listed = (await ss.scheduleList({ limit: 1_000_000 })).map((s) => s.name);
      expect(listed).toEqual([...listed].sort());
      expect(listed).toEqual(expect.arrayContaining([a.name, b.name]));
      expect((await ss.scheduleList({ limit: 1, after: a.name }))[0]?.name).toBe(b.name);

      const changed = { ...a, rev: a.rev + 1, paused: true, nextFireAt: 0 };
      expect(await ss.scheduleReplace({ schedule: changed, rev: a.rev + 5 })).toBe(false);
      expect(await ss.scheduleReplace({ schedule: changed, rev: a.rev })).toBe(true);
      expect(await ss.scheduleGet({ name: a.name })).toEqual(changed);
      expect(await ss.scheduleDelete({ name: a.name })).toBe(true);
      expect(await ss.scheduleDelete({ name: a.name })).toBe(false);
      expect(await ss.scheduleReplace({ schedule: { ...changed, rev: 3 }, rev: changed.rev })).toBe(false);
    });

    it("refuses a schedule past the quota (`max`), at the bound", async () => {
      const { ss } = await setup();
      const existing = (await ss.scheduleList({ limit: 1_000_000 })).length;
      expect(await ss.scheduleInsert({ schedule: schedule(T0), max: existing + 1 })).toBe("inserted");
      const over = schedule(T0);
      expect(await ss.scheduleInsert({ schedule: over, max: existing + 1 })).toBe("full");
      expect(await ss.scheduleGet({ name: over.name })).toBeUndefined();
    });
  });

  describe("scheduleDue", () => {
    it("answers due schedules earliest first, never one at 0, and when the next one is due", async () => {
      const { ss } = await setup();
      const base = T0 + 10 * YEAR + ++counter * YEAR;
      const later = schedule(base + 2);
      const first = schedule(base + 1);
      const future = schedule(base + 500);
      const never = schedule(0, { paused: true });
      for (const s of [later, first, future, never]) await ss.scheduleInsert({ schedule: s, max: 1_000_000 });
      const mine = new Set([later.name, first.name, future.name, never.name]);
      const { due, nextDueAt } = await ss.scheduleDue({ now: base + 2, limit: 1_000_000 });
      expect(due.filter((s) => mine.has(s.name)).map((s) => s.name)).toEqual([first.name, later.name]);
      expect(nextDueAt).toBe(base + 500);
      const times = due.map((s) => s.nextFireAt);
      expect(times).toEqual([...times].sort((x, y) => x - y));
      expect((await ss.scheduleDue({ now: base + 2, limit: 1 })).due).toHaveLength(1);
    });
  });

  describe("scheduleFire", () => {
    it("moves the schedule and inserts the instance with its first jobs in one step", async () => {
      const { ss, store, queue } = await setup();
      const s = schedule(T0 + 3_600_000, besideQueue(queue));
      await ss.scheduleInsert({ schedule: s, max: 1_000_000 });
      const begun = start(s, queue);
      const after = fired(s, begun.instance.id);
      expect(await ss.scheduleFire({ rev: s.rev, schedule: after, start: begun, cancel: [], now: T0 })).toEqual({
        applied: true,
        existed: false,
      });
      expect(await ss.scheduleGet({ name: s.name })).toEqual(after);
      expect(await store.workflows!.instanceGet({ id: begun.instance.id })).toEqual(begun.instance);
      expect(await get(store, begun.jobs[0]!.id)).toMatchObject({
        state: "pending",
        workflow: begun.jobs[0]!.workflow,
      });
    });

    it("writes nothing over another revision: the same fire decided twice starts once", async () => {
      const { ss, store, queue } = await setup();
      const s = schedule(T0, besideQueue(queue));
      await ss.scheduleInsert({ schedule: s, max: 1_000_000 });
      const begun = start(s, queue);
      const after = fired(s, begun.instance.id);
      const both = await Promise.all([
        ss.scheduleFire({ rev: s.rev, schedule: after, start: begun, cancel: [], now: T0 }),
        ss.scheduleFire({ rev: s.rev, schedule: after, start: start(s, queue), cancel: [], now: T0 }),
      ]);
      expect(both.filter((r) => r.applied)).toHaveLength(1);
      expect(both.find((r) => !r.applied)).toEqual({ applied: false, existed: false });
      const jobs = await store.jobScan({ queue, filter: {}, limit: 100, now: T0 });
      expect(jobs).toHaveLength(1);
    });

    it("finds an instance an earlier try started (its id exists): the schedule moves, nothing is inserted twice", async () => {
      const { ss, store, queue } = await setup();
      const s = schedule(T0, besideQueue(queue));
      await ss.scheduleInsert({ schedule: s, max: 1_000_000 });
      const begun = start(s, queue);
      expect(await store.workflows!.instanceInsert({ ...begun, now: T0 })).toBe(true);
      const again = start(s, queue); // the same derived instance id, another queue job
      const res = await ss.scheduleFire({
        rev: s.rev,
        schedule: fired(s, begun.instance.id),
        start: again,
        cancel: [],
        now: T0,
      });
      expect(res).toEqual({ applied: true, existed: true });
      expect(await get(store, again.jobs[0]!.id)).toBeUndefined();
      expect((await ss.scheduleGet({ name: s.name }))?.rev).toBe(s.rev + 1);
    });

    it("enqueues a plain job once by its id, and cancels the previous one unless a worker holds it", async () => {
      const { ss, store, queue } = await setup();
      const s = schedule(T0, besideQueue(queue));
      await ss.scheduleInsert({ schedule: s, max: 1_000_000 });
      const [waiting, held] = await insert(store, queue, [{ runAfter: T0 + YEAR }, {}]);
      const [running] = await handOut(store, queue);
      expect(running!.id).toBe(held);
      const job = newJob(queue);
      const after = fired(s, job.id);
      const res = await ss.scheduleFire({
        rev: s.rev,
        schedule: after,
        start: { job },
        cancel: [waiting!, held!],
        now: T0,
      });
      expect(res).toEqual({ applied: true, existed: false });
      expect(await get(store, job.id)).toMatchObject({ state: "pending", body: job.body });
      expect(await get(store, waiting!)).toBeUndefined();
      expect((await get(store, held!))?.state).toBe("running");
      const twice = await ss.scheduleFire({
        rev: after.rev,
        schedule: fired(after, job.id),
        start: { job: { ...job, body: new Uint8Array([9]) } },
        cancel: [],
        now: T0,
      });
      expect(twice).toEqual({ applied: true, existed: true });
      expect((await get(store, job.id))?.body).toEqual(job.body);
    });

    it("writes nothing when what it starts cannot be inserted (its queue is gone)", async () => {
      const { ss, store } = await setup();
      const s = schedule(T0);
      await ss.scheduleInsert({ schedule: s, max: 1_000_000 });
      const job = newJob("no_such_queue_here");
      await expect(
        ss.scheduleFire({ rev: s.rev, schedule: fired(s, job.id), start: { job }, cancel: [], now: T0 }),
      ).rejects.toThrow(/no_such_queue_here/);
      expect(await ss.scheduleGet({ name: s.name })).toEqual(s);
      expect(await get(store, job.id)).toBeUndefined();
    });
  });
}
