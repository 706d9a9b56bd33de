/**
 * The schedule-name protocol of stores of several shards (store/schedule-names.ts) at the
 * interleavings a live race rarely hits: a create overtaken between its claim and its
 * insert, and a delete overtaken by a create. Over steps kept in memory, each atomic as a
 * store's script or transaction is (the live stores run the same cases in
 * storetest/sharded-schedule-names.ts).
 */
import { describe, expect, it } from "vitest";
import type { Schedule } from "../../src/domain/schedule.js";
import { type NameClaim, type ScheduleNameSteps, ScheduleNames } from "../../src/store/schedule-names.js";

/** Three shards of schedules and fences, and a registry, in memory; `beforeInsert` lets a test hold an insert. */
function memorySteps() {
  const claims = new Map<string, NameClaim>();
  const shards = [0, 1, 2].map(() => ({ schedules: new Set<string>(), fences: new Set<string>() }));
  const gate: { beforeInsert?: () => Promise<void> } = {};
  const steps: ScheduleNameSteps = {
    async claimOf(name) {
      return claims.get(name);
    },
    async claimSwap({ name, expected, next, max }) {
      const held = claims.get(name);
      if (held?.token !== expected?.token) return { changed: held };
      if (!next) claims.delete(name);
      else if (!held && claims.size >= max) return "full";
      else claims.set(name, next);
      return "done";
    },
    async fence(shard, name, token) {
      if (shards[shard]!.schedules.has(name)) return "exists";
      shards[shard]!.fences.add(token);
      return "fenced";
    },
    async insert(shard, schedule, token) {
      await gate.beforeInsert?.();
      const on = shards[shard]!;
      if (on.fences.delete(token)) return "fenced";
      if (on.schedules.has(schedule.name)) return "exists";
      on.schedules.add(schedule.name);
      return "inserted";
    },
  };
  const copies = (name: string) => shards.filter((s) => s.schedules.has(name)).length;
  return { steps, claims, shards, gate, copies };
}

const named = (name: string) => ({ name }) as Schedule;

describe("schedule names across shards", () => {
  it("a create overtaken between its claim and its insert inserts nothing: the name has one schedule, the other create's", async () => {
    const m = memorySteps();
    const names = new ScheduleNames(m.steps);
    let release!: () => void;
    let claimed!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const atInsert = new Promise<void>((r) => (claimed = r));
    m.gate.beforeInsert = () => {
      m.gate.beforeInsert = undefined; // only the first create's insert waits
      claimed();
      return held;
    };
    const first = names.insert(named("n"), 1, 10);
    await atInsert;
    expect(await names.insert(named("n"), 2, 10)).toBe("inserted");
    release();
    expect(await first).toBe("exists");
    expect(m.copies("n")).toBe(1);
    expect(m.shards[2]!.schedules.has("n")).toBe(true);
    expect(m.claims.get("n")?.shard).toBe(2);
    expect(m.shards[1]!.fences.size).toBe(0); // the overtaken insert used its fence up
  });

  it("a claim whose schedule is on its shard is never taken over, and a full registry refuses a new name", async () => {
    const m = memorySteps();
    const names = new ScheduleNames(m.steps);
    expect(await names.insert(named("a"), 0, 2)).toBe("inserted");
    expect(await names.insert(named("a"), 2, 2)).toBe("exists");
    expect(await names.insert(named("b"), 1, 2)).toBe("inserted");
    expect(await names.insert(named("c"), 1, 2)).toBe("full");
    expect([m.copies("a"), m.copies("b"), m.copies("c")]).toEqual([1, 1, 0]);
    expect(m.shards.every((s) => s.fences.size === 0)).toBe(true);
  });

  it("a delete frees only the claim it read: one a create took over meanwhile stays that create's", async () => {
    const m = memorySteps();
    const names = new ScheduleNames(m.steps);
    expect(await names.insert(named("d"), 1, 10)).toBe("inserted");
    // The delete removes the schedule; before it frees the claim, a create of the name on shard 2 lands.
    const deleted = names.delete("d", 1, async () => {
      m.shards[1]!.schedules.delete("d");
      expect(await names.insert(named("d"), 2, 10)).toBe("inserted");
      return true;
    });
    expect(await deleted).toBe(true);
    expect(m.claims.get("d")?.shard).toBe(2);
    expect(await names.insert(named("d"), 0, 10)).toBe("exists");
    expect(m.copies("d")).toBe(1);
  });
});
