/**
 * Workflows and schedules on a store of several shards (docs/workflows.md#stores-of-several-shards,
 * store/instance-placement.ts): an instance lives on one shard with the queue jobs of its
 * runs, chosen among the shards where every queue of its workflow has a partition; a
 * schedule beside what its fires start. Run beside the workflow and schedule suites by the
 * entry tests of stores opened with 3 shards (queues placed by the formula over 3 shards).
 */
import { describe, expect, it } from "vitest";
import { RunlaterError } from "../../src/domain/errors.js";
import type { Schedule } from "../../src/domain/schedule.js";
import { createSchedule } from "../../src/domain/schedule-transitions.js";
import { encodeJobContext } from "../../src/domain/workflow-codec.js";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { startInstance, type WorkflowInstance } from "../../src/domain/workflow-transitions.js";
import { formulaShard } from "../../src/store/placement.js";
import type { Store } from "../../src/store/store.js";
import { createQueue, get, newJob, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

const SHARDS = 3;
let counter = 0;

const fresh = (what: string) => `${what}${process.pid}_${++counter}`;

/** A one-job workflow on `queue`, stored. */
async function workflow(store: Store, queue: string): Promise<WorkflowDef> {
  const def: WorkflowDef = {
    name: fresh("pw"),
    version: 1,
    jobs: [
      { name: "a", queue, inputs: [], onFailure: "abort", body: new Uint8Array(), priority: 0, attemptsAllowed: 0 },
    ],
  };
  await store.workflows!.workflowInsert({ def, now: T0 });
  return def;
}

/** The shard of each partition named, by the formula new queues are placed with. */
const shardsOf = (queue: string, partitions: number[]) =>
  new Set(partitions.map((p) => formulaShard(queue, p, SHARDS)));

/** A queue of one partition on shard `shard` (names tried until the formula puts one there). */
export async function queueOn(store: Store, shard: number): Promise<string> {
  for (;;) {
    const name = fresh("qs");
    if (formulaShard(name, 0, SHARDS) !== shard) continue;
    await store.queueCreate({ name, config: (await createdConfig(store)).config, now: T0 });
    return name;
  }
}

async function createdConfig(store: Store) {
  return (await store.queueGet({ name: await createQueue(store) }))!;
}

/** A schedule `name` of a plain job on `queue`, so it lives on that queue's shard. */
export function jobSchedule(name: string, queue: string): Schedule {
  return createSchedule(
    {
      name,
      cron: "0 * * * *",
      timeZone: "UTC",
      target: { kind: "job", queue, body: new Uint8Array([1]), priority: 0, attemptsAllowed: 0 },
      overlap: "allow",
      catchUp: "none",
      catchUpWindowMs: 0,
    },
    { now: T0, paused: false },
  );
}

/** Starts an instance of `def` as the engine does: its first run on a partition the store allows. */
async function start(store: Store, def: WorkflowDef, now = T0) {
  const ws = store.workflows!;
  const id = fresh("pi");
  const queue = def.jobs[0]!.queue;
  const allowed = (await ws.instancePartitions!({ id, queues: [queue] }))!.get(queue)!;
  const t = startInstance(def, { id, now, keepOpen: false, external: [] }, () => "");
  const job = newJob(queue, {
    partition: allowed[0]!,
    workflow: encodeJobContext({ workflow: def.name, version: 1, instanceId: id, job: "a", run: 1, triggeredBy: [] }),
  });
  t.instance.jobs.a!.runs[0]!.queueJobId = job.id;
  expect(await ws.instanceInsert({ instance: t.instance, jobs: [job], now })).toBe(true);
  return { instance: t.instance, job, allowed, shard: formulaShard(queue, allowed[0]!, SHARDS) };
}

const refusal = (call: Promise<unknown>) =>
  call.then(
    () => "accepted",
    (err: unknown) => (err instanceof RunlaterError ? `${err.code} ${err.message}` : String(err)),
  );

const ended = (i: WorkflowInstance, at: number): WorkflowInstance => ({
  ...i,
  rev: i.rev + 1,
  state: "cancelled",
  endedAt: at,
});

export function exercisePlacementOnShards(open: OpenStore): void {
  describe("instances on several shards", () => {
    it("spreads instances over the shards, each with its runs' jobs on partitions of its own shard", async () => {
      const store = await open();
      const queue = await createQueue(store, { partitions: 6 });
      const def = await workflow(store, queue);
      const shards = new Set<number>();
      for (let i = 0; i < 12; i++) {
        const { instance, allowed, shard } = await start(store, def);
        // Every partition offered is on one shard: the instance's, which it is found on later.
        expect(shardsOf(queue, allowed)).toEqual(new Set([shard]));
        expect(allowed).toHaveLength(2);
        const again = await store.workflows!.instancePartitions!({ id: instance.id, queues: [queue] });
        expect(again!.get(queue)).toEqual(allowed);
        shards.add(shard);
      }
      expect(shards.size).toBeGreaterThan(1);
    });

    it("refuses, naming the queues and the fix, a workflow whose queues share no shard", async () => {
      const store = await open();
      const [a, b] = [await queueOn(store, 1), await queueOn(store, 2)];
      const message = await refusal(store.workflows!.instancePartitions!({ id: "x", queues: [a, b] }));
      expect(message).toMatch(/^failed_precondition instance x: no shard of the 3 holds a partition of every queue/);
      expect(message).toContain(`${a} on shard 1; ${b} on shard 2`);
      expect(message).toContain("give these queues at least 3 partitions each");
    });

    it("refuses a step whose new job is on another shard than its instance, writing nothing", async () => {
      const store = await open();
      const queue = await createQueue(store, { partitions: 3 });
      const def = await workflow(store, queue);
      const { instance, shard } = await start(store, def);
      const elsewhere = [0, 1, 2].find((p) => formulaShard(queue, p, SHARDS) !== shard)!;
      const job = newJob(queue, { partition: elsewhere });
      const step = store.workflows!.instanceApply({
        id: instance.id,
        rev: instance.rev,
        instance: { ...instance, rev: instance.rev + 1 },
        jobs: [job],
        cancel: [],
        now: T0,
      });
      expect(await refusal(step)).toMatch(
        new RegExp(`^failed_precondition instance ${instance.id} lives on shard ${shard}, where queue "${queue}"`),
      );
      expect(await get(store, job.id)).toBeUndefined();
      expect((await store.workflows!.instanceGet({ id: instance.id }))?.rev).toBe(instance.rev);
    });

    it("reads, lists, steps and retires instances on every shard, shard 0 or not", async () => {
      const store = await open();
      const ws = store.workflows!;
      const queues = [await queueOn(store, 0), await queueOn(store, 1), await queueOn(store, 2)];
      const made: Array<Awaited<ReturnType<typeof start>>> = [];
      for (const [i, queue] of queues.entries()) made.push(await start(store, await workflow(store, queue), T0 + i));
      expect(made.map((m) => m.shard)).toEqual([0, 1, 2]);
      for (const { instance } of made) expect(await ws.instanceGet({ id: instance.id })).toEqual(instance);
      // Newest first across the shards, and from a cursor, as on one shard.
      const mine = (list: WorkflowInstance[]) => list.filter((i) => made.some((m) => m.instance.id === i.id));
      const page = mine(await ws.instanceList({ limit: 1_000 }));
      expect(page.map((i) => i.id)).toEqual(made.map((m) => m.instance.id).reverse());
      const after = { createdAt: made[2]!.instance.createdAt, id: made[2]!.instance.id };
      expect(mine(await ws.instanceList({ limit: 1_000, after })).map((i) => i.id)).toEqual([
        made[1]!.instance.id,
        made[0]!.instance.id,
      ]);
      // A step of the instance on shard 2: its next run's job beside it, its first cancelled.
      const { instance, job } = made[2]!;
      const next = newJob(queues[2]!);
      const step = await ws.instanceApply({
        id: instance.id,
        rev: instance.rev,
        instance: ended(instance, T0 + 10),
        jobs: [next],
        cancel: [job.id],
        now: T0 + 10,
      });
      expect(step).toEqual({ applied: true });
      expect(await get(store, job.id)).toBeUndefined();
      expect((await get(store, next.id))?.state).toBe("pending");
      expect((await ws.instanceGet({ id: instance.id }))?.state).toBe("cancelled");
      expect(mine(await ws.instanceList({ state: "cancelled", limit: 1_000 })).map((i) => i.id)).toEqual([instance.id]);
      // Retention on every shard.
      for (const { instance: i } of made.slice(0, 2))
        await ws.instanceApply({ id: i.id, rev: i.rev, instance: ended(i, T0 + 10), jobs: [], cancel: [], now: T0 });
      expect(await ws.instanceDeleteEnded({ endedBefore: T0 + 11, limit: 1_000 })).toBeGreaterThanOrEqual(3);
      for (const { instance: i } of made) expect(await ws.instanceGet({ id: i.id })).toBeUndefined();
    });
  });

  describe("schedules on several shards", () => {
    it("lives beside its plain job's queue, on shard 2, and fires there in one step; lists and due merge every shard", async () => {
      const store = await open();
      const ss = store.schedules!;
      const queues = [await queueOn(store, 0), await queueOn(store, 2)];
      const schedules = queues.map((queue, i) => ({
        ...jobSchedule(fresh(`ps${i}_`), queue),
        nextFireAt: T0 - 10 + i,
      }));
      for (const s of schedules) expect(await ss.scheduleInsert({ schedule: s, max: 1_000_000 })).toBe("inserted");
      // The name is taken on every shard.
      expect(
        await ss.scheduleInsert({ schedule: { ...schedules[1]!, target: schedules[0]!.target }, max: 1_000_000 }),
      ).toBe("exists");
      const s = schedules[1]!;
      expect(await ss.schedulePartitions!({ name: s.name, queues: [queues[1]!] })).toEqual(new Map([[queues[1], [0]]]));
      const due = await ss.scheduleDue({ now: T0, limit: 1_000 });
      const names = schedules.map((x) => x.name);
      expect(due.due.filter((d) => names.includes(d.name)).map((d) => d.name)).toEqual(names);
      const listed = await ss.scheduleList({ limit: 1_000 });
      expect(listed.filter((l) => names.includes(l.name)).map((l) => l.name)).toEqual([...names].sort());
      // A fire of the schedule on shard 2: its job inserted and the schedule moved in one step.
      const job = newJob(queues[1]!);
      const next = { ...s, rev: s.rev + 1, nextFireAt: T0 + 3_600_000, lastStarted: job.id, fires: 1 };
      expect(await ss.scheduleFire({ rev: s.rev, schedule: next, start: { job }, cancel: [], now: T0 })).toEqual({
        applied: true,
        existed: false,
      });
      expect((await get(store, job.id))?.state).toBe("pending");
      expect(await ss.scheduleGet({ name: s.name })).toEqual(next);
      // A stale fire writes nothing.
      expect(await ss.scheduleFire({ rev: s.rev, schedule: next, start: { job }, cancel: [], now: T0 })).toEqual({
        applied: false,
        existed: false,
      });
      expect(await ss.scheduleDelete({ name: s.name })).toBe(true);
      expect(await ss.scheduleGet({ name: s.name })).toBeUndefined();
    });

    it("counts the schedules of every shard for the quota", async () => {
      const store = await open();
      const ss = store.schedules!;
      const before = (await ss.scheduleList({ limit: 100_000 })).length;
      const make = async (queue: string) =>
        ss.scheduleInsert({ schedule: jobSchedule(fresh("pq"), queue), max: before + 1 });
      expect(await make(await queueOn(store, 1))).toBe("inserted");
      expect(await make(await queueOn(store, 2))).toBe("full");
    });
  });
}
