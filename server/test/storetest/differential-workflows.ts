/**
 * The workflow steps of the differential check (differential.ts): instances inserted with
 * their first queue jobs, and instanceApply with an ACK (fresh or stale claim, of a
 * workflow job's run or of a plain job), the expected revision or another (a conflict),
 * new queue jobs (some behind an ordering key), cancels of jobs in any state, and the ACK
 * alone for an instance that is gone; and, on a store that keeps schedules, schedule fires
 * (over the revision or another, starting an instance or a plain job, new or existing,
 * with cancels). The stores only apply what they are given, so the
 * instances need not follow the domain's rules; what must agree is what each store
 * answers and holds afterwards. Every random value is drawn before a store is called.
 */
import { newJobId, parseJobId } from "../../src/domain/job-id.js";
import type { JobRecord, NewJob } from "../../src/domain/job-record.js";
import type { Schedule } from "../../src/domain/schedule.js";
import { createSchedule } from "../../src/domain/schedule-transitions.js";
import { encodeJobContext } from "../../src/domain/workflow-codec.js";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { type InstanceState, startInstance, type WorkflowInstance } from "../../src/domain/workflow-transitions.js";
import type { FireStart, ScheduleStore, Store, WorkflowAck, WorkflowStore } from "../../src/store/store.js";

export interface Draw {
  rand: () => number;
  pick: <T>(items: T[]) => T;
}

/** A workflow job's context naming `instanceId` (with bytes and non-ASCII text, opaque to every store). */
export function jobContext(d: Draw, instanceId: string): string {
  const result = Uint8Array.from({ length: Math.floor(d.rand() * 4) }, () => Math.floor(d.rand() * 256));
  return encodeJobContext({
    workflow: "wf",
    version: 1,
    instanceId,
    job: d.pick(["a", "b"]),
    run: 1 + Math.floor(d.rand() * 5),
    triggeredBy: [
      {
        input: "job:a",
        event: { id: "e1", postedAt: 1, from: { job: "a", run: 1 }, customStatus: "fertig ✓", result },
      },
    ],
  });
}

/** Queue jobs of an instance's runs, as the engine makes them (no idempotency key; some behind an ordering key). */
function runJobs(d: Draw, queue: string, partitions: number, instanceId: string, now: number): NewJob[] {
  return Array.from({ length: Math.floor(d.rand() * 3) }, () => {
    const order = d.rand() < 0.3 ? Math.floor(d.rand() * 3) : -1;
    const partition = order >= 0 ? order % partitions : Math.floor(d.rand() * partitions);
    return {
      id: newJobId(queue, partition, now),
      queue,
      partition,
      priority: 1 + Math.floor(d.rand() * 3),
      body: Uint8Array.of(Math.floor(d.rand() * 256)),
      runAfter: now + d.pick([0, 0, 300]),
      attemptsAllowed: 1 + Math.floor(d.rand() * 2),
      customStatus: "",
      createdAt: now,
      idempotencyKey: "",
      orderingKey: order >= 0 ? `o${order}` : "",
      workflow: jobContext(d, instanceId),
    };
  });
}

function definition(queue: string): WorkflowDef {
  const job = { queue, onFailure: "continue" as const, body: Uint8Array.of(1), priority: 0, attemptsAllowed: 0 };
  return {
    name: "wf",
    version: 1,
    jobs: [
      { ...job, name: "a", inputs: [] },
      { ...job, name: "b", inputs: [{ job: "a" }] },
    ],
  };
}

export interface WorkflowSteps {
  /** The ids of every instance inserted so far (some deleted since). */
  instances: string[];
  /** One random workflow step; `both` runs a call on every store and compares the answers. */
  step(
    op: "wfstart" | "wfstep" | "wfgc" | "wffire",
    p: { now: number; memory: Store; running: JobRecord[]; ids: string[]; both: Both },
  ): Promise<void>;
  /** Every instance, and the lists, agree (and every schedule, with schedule fires). */
  compare(both: Both, now: number): Promise<void>;
}

export type Both = <R>(call: (s: Store) => Promise<R>, compare?: (r: R) => unknown) => Promise<R>;

const ws = (s: Store): WorkflowStore => {
  if (!s.workflows) throw new Error(`the ${s.name} store keeps no workflows`);
  return s.workflows;
};

const ss = (s: Store): ScheduleStore => {
  if (!s.schedules) throw new Error(`the ${s.name} store keeps no schedules`);
  return s.schedules;
};

export function workflowSteps(d: Draw, seed: number, queue: string, partitions: number): WorkflowSteps {
  const instances: string[] = [];
  const schedules = [`s${seed}_a`, `s${seed}_b`];
  const def = definition(queue);
  let made = 0;
  let fired = false;
  return {
    instances,
    async step(op, p) {
      const { now, both } = p;
      if (op === "wfstart") {
        const again = instances.length > 0 && d.rand() < 0.1;
        const id = again ? d.pick(instances) : `i${seed}_${++made}`;
        const t = startInstance(def, { id, now, keepOpen: d.rand() < 0.3, external: [] }, () => "");
        const jobs = runJobs(d, queue, partitions, id, now);
        if (!again) instances.push(id);
        p.ids.push(...jobs.map((j) => j.id));
        await both((s) => ws(s).instanceInsert({ instance: t.instance, jobs, now }));
      } else if (op === "wfstep") {
        const gone = instances.length === 0 || d.rand() < 0.1;
        const id = gone ? `gone${seed}_${++made}` : d.pick(instances);
        // Mostly a workflow job's run; sometimes a plain job's (not_found) or no ACK.
        const runs = p.running.filter((j) => j.workflow !== undefined);
        const from = runs.length > 0 && d.rand() < 0.75 ? runs : p.running;
        const target = from.length > 0 && d.rand() < 0.85 ? d.pick(from) : undefined;
        const stale = d.rand() < 0.15;
        const ack: WorkflowAck | undefined = target && {
          id: target.id,
          claimToken: stale ? "stale" : target.claimToken,
          ...(d.rand() < 0.6
            ? { kind: "complete" as const, customStatus: d.pick(["", "done"]) }
            : {
                kind: "fail" as const,
                customStatus: d.pick(["", "boom"]),
                retryDelayMs: d.pick([undefined, 0, 400]),
                noRetry: d.rand() < 0.3,
              }),
        };
        const revDelta = d.pick([0, 0, 0, 0, 1, -1]);
        const state = d.pick<InstanceState>(["running", "running", "succeeded", "failed", "aborted", "cancelled"]);
        const jobs = gone ? [] : runJobs(d, queue, partitions, id, now);
        const cancel = p.ids.filter(() => d.rand() < 0.1);
        const eventSeq = Math.floor(d.rand() * 100);
        p.ids.push(...jobs.map((j) => j.id));
        // The instance as it is (the stores hold the same one: compare checks that after every step).
        const current = gone ? undefined : await ws(p.memory).instanceGet({ id });
        const rev = (current?.rev ?? 0) + revDelta;
        const instance: WorkflowInstance | undefined = current && {
          ...current,
          rev: current.rev + 1,
          state,
          endedAt: state === "running" ? 0 : now,
          eventSeq,
        };
        await both((s) => ws(s).instanceApply({ id, rev, instance, jobs, cancel, ack, now }));
      } else if (op === "wffire") {
        await fire(p);
      } else {
        // Every instance that ended before the bound goes (a limit that cuts could pick differently).
        await both((s) => ws(s).instanceDeleteEnded({ endedBefore: now - 300, limit: 1000 }));
      }
    },
    async compare(both, now) {
      await both(
        (s) => Promise.all(instances.map((id) => ws(s).instanceGet({ id }))),
        (found) => found,
      );
      for (const filter of [{}, { state: "running" as const }, { workflow: "wf", state: "succeeded" as const }])
        await both((s) => ws(s).instanceList({ ...filter, limit: 1000 }));
      const all = await both((s) => ws(s).instanceList({ limit: 1000 }));
      const middle = all[Math.floor(all.length / 2)];
      if (middle)
        await both((s) => ws(s).instanceList({ limit: 3, after: { createdAt: middle.createdAt, id: middle.id } }));
      if (!fired) return;
      await both((s) => Promise.all(schedules.map((name) => ss(s).scheduleGet({ name }))));
      await both((s) => ss(s).scheduleDue({ now, limit: 1000 }));
    },
  };

  /**
   * A schedule's fire (its schedule inserted first, the first time): over its revision or
   * another; starting a new instance, one that exists, a new plain job or one that exists,
   * or nothing; cancelling some jobs.
   */
  async function fire(p: { now: number; memory: Store; ids: string[]; both: Both }): Promise<void> {
    const { now, both } = p;
    fired = true;
    const name = d.pick(schedules);
    const current = await ss(p.memory).scheduleGet({ name });
    const nextFireAt = d.pick([0, now - 10, now + 500]);
    if (!current) {
      const spec = { name, cron: "* * * * *", timeZone: "UTC", overlap: "allow" as const, catchUp: "none" as const };
      const target = { kind: "workflow" as const, workflow: "wf", events: [], keepOpen: false };
      const schedule = {
        ...createSchedule({ ...spec, target, catchUpWindowMs: 0 }, { now, paused: false }),
        nextFireAt,
      };
      await both((s) => ss(s).scheduleInsert({ schedule, max: 1000 }));
      return;
    }
    const rev = current.rev + d.pick([0, 0, 0, 1]);
    const kind = d.pick(["instance", "job", "none"] as const);
    const again = d.rand() < 0.25;
    let start: FireStart | undefined;
    if (kind === "instance") {
      const id = again && instances.length > 0 ? d.pick(instances) : `f${seed}_${++made}`;
      const t = startInstance(def, { id, now, keepOpen: false, external: [] }, () => "");
      start = { instance: t.instance, jobs: runJobs(d, queue, partitions, id, now) };
      if (!instances.includes(id)) instances.push(id);
      p.ids.push(...start.jobs.map((j) => j.id));
    } else if (kind === "job") {
      const id = again && p.ids.length > 0 ? d.pick(p.ids) : newJobId(queue, Math.floor(d.rand() * partitions), now);
      const body = Uint8Array.of(Math.floor(d.rand() * 256));
      start = {
        job: {
          id,
          queue,
          partition: parseJobId(id)!.partition,
          priority: 1,
          body,
          runAfter: now,
          attemptsAllowed: 1,
          customStatus: "",
          createdAt: now,
          idempotencyKey: "",
          orderingKey: "",
        },
      };
      if (!p.ids.includes(id)) p.ids.push(id);
    }
    const cancel = p.ids.filter(() => d.rand() < 0.1);
    const schedule: Schedule = {
      ...current,
      rev: current.rev + 1,
      nextFireAt,
      fires: current.fires + 1,
      lastStarted: start ? ("job" in start ? start.job.id : start.instance.id) : current.lastStarted,
    };
    await both((s) => ss(s).scheduleFire({ rev, schedule, start, cancel, now }));
  }
}
