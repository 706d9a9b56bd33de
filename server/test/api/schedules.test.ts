/**
 * ScheduleService through the public API on the memory store (schedule-cases.ts), and one
 * fire per time across a failover of the maintenance leader between two nodes sharing one
 * store.
 */
import { FireOutcome, OverlapPolicy } from "@runlater/sdk/gen/schedule_service_pb.js";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { timestampToMs } from "../../src/wire/time.js";
import { clients, describeScheduleService } from "./schedule-cases.js";

const T0 = Date.UTC(2030, 0, 1);

describeScheduleService("memory", async () => new MemoryStore());

describe("a failover of the maintenance leader", () => {
  it("fires each time once: the leader fires, and after it stops the other node fires the next", async () => {
    const clock = new ManualClock(T0);
    const store = new MemoryStore();
    const nodes = [
      await startServer({ store, port: 0, clock, leaseTtlMs: 3000 }),
      await startServer({ store, port: 0, clock, leaseTtlMs: 3000 }),
    ];
    try {
      const c = clients(nodes[0]!.url);
      await c.queues.createQueue({ name: "ticks" });
      await c.schedules.createSchedule({
        schedule: {
          name: "tick",
          cron: "*/10 * * * * *",
          target: { case: "job", value: { queue: "ticks" } },
          overlap: OverlapPolicy.ALLOW,
        },
      });
      await clock.advance(3000); // both nodes see each other
      const leader = nodes.find((n) => n.membership.leads())!;
      const follower = nodes.find((n) => n !== leader)!;
      expect(follower.membership.leads()).toBe(false);
      await clock.advance(7000); // T0+10s fires on the leader
      await leader.stop();
      await clock.advance(60_000); // the follower leads now and fires T0+20s … T0+70s
      const s = (await clients(follower.url).schedules.getSchedule({ name: "tick" })).schedule!;
      expect(follower.maintenance.rounds.fires).toBeGreaterThan(0);
      const started = s.history.filter((r) => r.outcome === FireOutcome.STARTED).map((r) => timestampToMs(r.at));
      expect(started).toEqual([1, 2, 3, 4, 5, 6, 7].map((k) => T0 + k * 10_000));
      expect(s.history.some((r) => r.outcome === FireOutcome.MISSED)).toBe(false);
      const jobs = await clients(follower.url).queues.getQueue({ name: "ticks" });
      expect(jobs.queue!.stats!.pending).toBe(7n);
    } finally {
      for (const n of nodes) await n.stop();
    }
  });
});
