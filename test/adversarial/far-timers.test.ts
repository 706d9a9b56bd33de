/**
 * A job due more than 2^31 ms (~24.8 days) ahead must not turn the broker's due timer
 * into a busy loop (Node fires such timers after 1 ms): while a worker long-polls its
 * queue, the store is asked a handful of times, not thousands, and nothing warns.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../server/src/domain/clock.js";
import { serve, storeKinds, type Target } from "./harness.js";

const DAY_MS = 86_400_000;

describe("timers beyond what Node's setTimeout holds", () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on("warning", onWarning);
  afterEach(() => {
    warnings.length = 0;
  });
  afterAll(() => {
    process.off("warning", onWarning);
  });

  it("waits out a delay longer than 2^31 ms without firing early", async () => {
    let fired = false;
    const cancel = systemClock.setTimer(2 ** 31 + 10_000, () => {
      fired = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    cancel();
    expect(fired).toBe(false);
    expect(warnings).not.toContain("TimeoutOverflowWarning");
  });

  it.each(storeKinds)(
    "keeps the store quiet while a worker long-polls a queue whose only job is a month away (%s)",
    async (kind) => {
      let t: Target | undefined;
      try {
        t = await serve(kind);
        await t.rpc("QueueService/CreateQueue", { name: "later" });
        const runAfter = new Date(Date.now() + 30 * DAY_MS).toISOString();
        expect((await t.rpc("JobService/Enqueue", { jobs: [{ queue: "later", runAfter }] })).status).toBe(200);
        t.calls.clear();
        const poll = await t.rpc("WorkerService/Dequeue", { queue: "later", limit: 1, wait: "1s" });
        expect(poll.body.jobs ?? []).toEqual([]);
        const total = [...t.calls.values()].reduce((a, b) => a + b, 0);
        expect(total).toBeLessThan(20);
        expect(warnings).not.toContain("TimeoutOverflowWarning");
      } finally {
        await t?.stop();
      }
    },
  );
});
