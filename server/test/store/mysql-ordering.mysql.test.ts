/**
 * Ordering keys under concurrency on MySQL: two stores on one database stand for two
 * servers. Whatever interleaving their transactions get, a key never has two heads and
 * never is left with only waiting jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobRecord } from "../../src/domain/job-record.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { handOut, newJob, T0 } from "../storetest/fixtures.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const url = freshDatabaseUrl("ordering");
let a: MysqlStore;
let b: MysqlStore;
const queue = "ordering_q";

beforeAll(async () => {
  a = await openMysqlStore([url], { connectionLimit: 4 });
  b = await openMysqlStore([url], { connectionLimit: 4 });
  await a.queueCreate({ name: queue, config: resolveQueueConfig(), now: T0 });
});

afterAll(() => dropDatabases(a, b));

/** The key's jobs that have not ended: exactly one may be other than waiting. */
function expectOneHead(jobs: JobRecord[]) {
  const live = jobs.filter((j) => j.state !== "succeeded" && j.state !== "failed");
  if (live.length > 0) expect(live.filter((j) => j.state !== "waiting")).toHaveLength(1);
}

describe("mysql ordering keys under concurrency", () => {
  it("two servers enqueueing a new key at once make one head, the other waits", async () => {
    for (let round = 0; round < 20; round++) {
      const orderingKey = `new-${round}`;
      const [[x], [y]] = await Promise.all([
        a.jobInsertMany({ jobs: [newJob(queue, { orderingKey })], now: T0 }),
        b.jobInsertMany({ jobs: [newJob(queue, { orderingKey })], now: T0 }),
      ]);
      const jobs = (await a.jobGetMany({ ids: [x!, y!] })).map((j) => j!);
      expect(jobs.map((j) => j.state).sort()).toEqual(["pending", "waiting"]);
    }
  });

  it("an ack of the head racing an enqueue of its key never strands the key", async () => {
    for (let round = 0; round < 20; round++) {
      const orderingKey = `race-${round}`;
      const [first] = await a.jobInsertMany({ jobs: [newJob(queue, { orderingKey })], now: T0 });
      const [head] = (await handOut(a, queue)).filter((j) => j.id === first);
      const [, [late]] = await Promise.all([
        a.jobCompleteMany({ items: [{ id: head!.id, claimToken: head!.claimToken, customStatus: "" }], now: T0 }),
        b.jobInsertMany({ jobs: [newJob(queue, { orderingKey })], now: T0 }),
      ]);
      const jobs = (await a.jobGetMany({ ids: [first!, late!] })).map((j) => j!);
      expect(jobs[0]!.state).toBe("succeeded");
      expect(jobs[1]!.state).toBe("pending");
      expectOneHead(jobs);
      await handOut(a, queue); // start the late one, so the next round's head is alone
    }
  });
});
