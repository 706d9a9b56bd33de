/**
 * A body regex in ScanJobs, CountJobs or DeleteJobs cannot stall the server: it is RE2
 * (linear time), its length is capped, and a walk over a big queue lets other work run.
 */

import { RE2JS } from "re2js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { serve, storeKinds, type Target } from "./harness.js";

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe.each(storeKinds)("body regex (%s)", (kind) => {
  let t: Target;
  beforeAll(async () => {
    t = await serve(kind);
    await t.rpc("QueueService/CreateQueue", { name: "q" });
    // 40 a's and a '!': a backtracking engine needs ~2^40 steps for ^(a+)+$ (hours).
    await t.rpc("JobService/Enqueue", {
      jobs: [
        { queue: "q", body: b64(`${"a".repeat(40)}!`) },
        { queue: "q", body: b64("aaaa") },
      ],
    });
  });
  afterAll(() => t.stop());

  it("answers a catastrophic-backtracking pattern at once, correctly", async () => {
    const [count, scan] = await Promise.all([
      t.rpc("JobService/CountJobs", { queue: "q", bodyRegex: "^(a+)+$" }),
      t.rpc("JobService/ScanJobs", { queue: "q", bodyRegex: "^(a+)+$" }),
    ]);
    expect(count.body).toEqual({ count: "1" });
    expect((scan.body.jobs as unknown[]).length).toBe(1);
  });

  it("refuses a pattern longer than 256 characters, and syntax RE2 does not have, naming body_regex", async () => {
    for (const bodyRegex of ["a".repeat(257), "(a)\\1", "(?=a)"]) {
      const answer = await t.rpc("JobService/CountJobs", { queue: "q", bodyRegex });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe("invalid_argument");
      expect(answer.body.message).toMatch(/body_regex/);
    }
    expect((await t.rpc("JobService/CountJobs", { queue: "q", bodyRegex: "a".repeat(256) })).status).toBe(200);
  });
});

describe("a walk over a big queue in memory", () => {
  it("lets other work run while it counts", async () => {
    const store = new MemoryStore();
    await store.queueCreate({
      name: "big",
      config: (await import("../../server/src/domain/queue-config.js")).resolveQueueConfig({}),
      now: 0,
    });
    const body = new TextEncoder().encode("x".repeat(1000));
    for (let batch = 0; batch < 20; batch++) {
      const jobs = Array.from({ length: 1000 }, (_, i) => ({
        id: `big.0.${batch}-${i}`,
        queue: "big",
        partition: 0,
        priority: 1,
        body,
        runAfter: 0,
        attemptsAllowed: 1,
        customStatus: "",
        createdAt: 0,
        idempotencyKey: "",
        orderingKey: "",
      }));
      await store.jobInsertMany({ jobs, now: 0 });
    }
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const count = await store.jobCount({ queue: "big", filter: { bodyRegex: RE2JS.compile("y") }, now: 0 });
    counting = false;
    expect(count).toBe(0);
    // 20,000 jobs and 20 MB of bodies: the walk stepped aside at least every 1,000 jobs / 1 MiB.
    expect(turns).toBeGreaterThanOrEqual(19);
  });
});
