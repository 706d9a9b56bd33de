/**
 * One name, one schedule, on a store of several shards (docs/workflows.md#stores-of-several-shards,
 * store/schedule-names.ts): creates of one name racing onto different shards, the quota
 * under creates racing on every shard, a create that crashed between its claim and its
 * insert, and a delete. Run by the entry tests of stores opened with 3 shards.
 */
import { describe, expect, it } from "vitest";
import type { Schedule } from "../../src/domain/schedule.js";
import type { ScheduleNames } from "../../src/store/schedule-names.js";
import type { Store } from "../../src/store/store.js";
import { get, newJob, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";
import { jobSchedule, queueOn } from "./sharded-placement.js";

let counter = 0;

const fresh = (what: string) => `${what}${process.pid}_${++counter}`;

/** A schedule `name` of a plain job on `queue` (so it lives on that queue's shard), due at T0. */
const scheduleOf = (name: string, queue: string): Schedule => ({ ...jobSchedule(name, queue), nextFireAt: T0 });

/** The sharded store's name registry (every store of several shards keeps one: store/schedule-names.ts). */
const namesOf = (store: Store) => (store.schedules as unknown as { names: ScheduleNames }).names;

/** How many schedules the store holds (every shard's). */
const count = async (store: Store) => (await store.schedules!.scheduleList({ limit: 100_000 })).length;

export function exerciseScheduleNamesOnShards(open: OpenStore): void {
  describe("schedule names on several shards", () => {
    it("one name created at once with targets on two shards: one create wins, and the schedule fires once", async () => {
      const store = await open();
      const ss = store.schedules!;
      const queues = [await queueOn(store, 1), await queueOn(store, 2)];
      // Several names at once, so both orders of the race happen.
      const names = Array.from({ length: 4 }, () => fresh("race"));
      const replies = await Promise.all(
        names.map((name) =>
          Promise.all(queues.map((queue) => ss.scheduleInsert({ schedule: scheduleOf(name, queue), max: 100_000 }))),
        ),
      );
      for (const pair of replies) expect(pair.sort()).toEqual(["exists", "inserted"]);
      const due = (await ss.scheduleDue({ now: T0, limit: 100_000 })).due.filter((s) => names.includes(s.name));
      expect(due.map((s) => s.name).sort()).toEqual([...names].sort());
      // Each fires once: its one copy moves on; the same fire again is stale.
      for (const s of due) {
        const target = s.target as { queue: string };
        const job = newJob(target.queue);
        const next = { ...s, rev: s.rev + 1, nextFireAt: T0 + 3_600_000, lastStarted: job.id, fires: 1 };
        const fire = { rev: s.rev, schedule: next, start: { job }, cancel: [], now: T0 };
        expect(await ss.scheduleFire(fire)).toEqual({ applied: true, existed: false });
        expect(await ss.scheduleFire(fire)).toEqual({ applied: false, existed: false });
        expect((await get(store, job.id))?.state).toBe("pending");
      }
      expect((await ss.scheduleDue({ now: T0, limit: 100_000 })).due.filter((s) => names.includes(s.name))).toEqual([]);
    });

    it("never passes the quota under creates racing on every shard", async () => {
      const store = await open();
      const ss = store.schedules!;
      const queues = [await queueOn(store, 0), await queueOn(store, 1), await queueOn(store, 2)];
      const before = await count(store);
      const replies = await Promise.all(
        Array.from({ length: 9 }, (_, i) =>
          ss.scheduleInsert({ schedule: scheduleOf(fresh("quota"), queues[i % 3]!), max: before + 2 }),
        ),
      );
      expect(replies.filter((r) => r === "inserted")).toHaveLength(2);
      expect(replies.filter((r) => r === "full")).toHaveLength(7);
      expect(await count(store)).toBe(before + 2);
    });

    it("a create that crashed between its claim and its insert blocks nothing, and can never insert later", async () => {
      const store = await open();
      const ss = store.schedules!;
      const names = namesOf(store);
      const [crashedQueue, laterQueue] = [await queueOn(store, 1), await queueOn(store, 2)];
      const name = fresh("crash");
      // The crashed create's first step alone: its claim, no schedule.
      const crashed = { shard: 1, token: "c".repeat(32) };
      expect(await names.steps.claimSwap({ name, next: crashed, max: 100_000 })).toBe("done");
      expect(await ss.scheduleGet({ name })).toBeUndefined();

      const later = scheduleOf(name, laterQueue);
      expect(await ss.scheduleInsert({ schedule: later, max: 100_000 })).toBe("inserted");
      expect(await ss.scheduleGet({ name })).toEqual(later);
      expect((await names.steps.claimOf(name))?.shard).toBe(2);
      // Its second step, were it to happen now, is refused on its shard: one name, one schedule.
      expect(await names.steps.insert(1, scheduleOf(name, crashedQueue), crashed.token)).toBe("fenced");
      expect((await ss.scheduleList({ limit: 100_000 })).filter((s) => s.name === name)).toEqual([later]);
      expect(await ss.scheduleInsert({ schedule: scheduleOf(name, crashedQueue), max: 100_000 })).toBe("exists");
    });

    it("a delete frees the name, on any shard, and its place in the quota", async () => {
      const store = await open();
      const ss = store.schedules!;
      const queues = [await queueOn(store, 1), await queueOn(store, 2)];
      const name = fresh("freed");
      const max = (await count(store)) + 1;
      expect(await ss.scheduleInsert({ schedule: scheduleOf(name, queues[0]!), max })).toBe("inserted");
      expect(await ss.scheduleInsert({ schedule: scheduleOf(fresh("other"), queues[1]!), max })).toBe("full");
      expect(await ss.scheduleDelete({ name })).toBe(true);
      expect(await namesOf(store).steps.claimOf(name)).toBeUndefined();
      const again = scheduleOf(name, queues[1]!);
      expect(await ss.scheduleInsert({ schedule: again, max })).toBe("inserted");
      expect(await ss.scheduleGet({ name })).toEqual(again);
      expect(await ss.scheduleDelete({ name })).toBe(true);
      expect(await ss.scheduleDelete({ name })).toBe(false);
    });
  });
}
