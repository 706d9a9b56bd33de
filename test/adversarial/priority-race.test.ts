/**
 * Priorities stay strict when a better job arrives while a refill is already reading the
 * store: a Dequeue that joins that refill must not settle for what it read before the
 * better job existed. The store's claims are slowed so that a refill is in flight at the
 * moment the priority-1 job is enqueued and the next Dequeue arrives, every round.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, storeKinds, type Target } from "./harness.js";

const ROUNDS = 25;
const b64 = (text: string) => Buffer.from(text).toString("base64");

describe.each(storeKinds)("a better job enqueued while a refill is in flight (%s)", (kind) => {
  let t: Target;
  beforeAll(async () => {
    t = await serve(kind, { slow: { jobClaimMany: 30 } });
  });
  afterAll(() => t.stop());

  it(`is handed out first, every one of ${ROUNDS} rounds`, async () => {
    const wrong: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const queue = `race_${round}`;
      await t.rpc("QueueService/CreateQueue", { name: queue, config: { priorities: 3 } });
      await t.rpc("JobService/Enqueue", {
        jobs: [
          { queue, body: b64("p3"), priority: 3 },
          { queue, body: b64("p2"), priority: 2 },
        ],
      });
      // Takes p2 and leaves p3 buffered; the broker then refills in the background (a slow claim).
      await t.rpc("WorkerService/Dequeue", { queue, limit: 1, wait: "1s" });
      await t.rpc("JobService/Enqueue", { jobs: [{ queue, body: b64("p1"), priority: 1 }] });
      const { body } = await t.rpc("WorkerService/Dequeue", { queue, limit: 1, wait: "1s" });
      const [job] = body.jobs as Array<{ body: string }>;
      const got = Buffer.from(job?.body ?? "", "base64").toString();
      if (got !== "p1") wrong.push(`round ${round}: ${got || "nothing"}`);
    }
    expect(wrong).toEqual([]);
  }, 60_000);
});
