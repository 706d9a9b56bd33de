/**
 * MySQL claim checks (schema 6, claim-checks.ts): the ledger the claim-timeout sweep reads
 * instead of an index on claim_expires_at. The shared suite checks what users see (claims
 * run out, extensions hold); this file checks the ledger itself: which writes add checks,
 * that an ACK leaves them alone and the sweep clears them, that a sweep cut short by its
 * limit keeps the rest of a check, that a job locked by an ACK in flight is waited for
 * rather than skipped (skipping would delete its only check), and what the sweep reports
 * as the time to look again.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import type { HandOutPlan } from "../../src/domain/transitions.js";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { Shard, select } from "../../src/store/mysql/shard.js";
import { newJob, T0 } from "../storetest/fixtures.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const url = freshDatabaseUrl("checks");
let store: MysqlStore;
let shard: Shard;
let n = 0;

beforeAll(async () => {
  store = await openMysqlStore([url], { connectionLimit: 4 });
  shard = new Shard(0, url, { retryForMs: 5000, connectionLimit: 2 });
}, 60_000);

afterAll(() => dropDatabases(store, shard));

/** A fresh queue whose `count` jobs are started at T0 with a claim of `claimMs`: one token for all (the fast start) or one each (the exact path). */
async function started(
  count: number,
  claimMs: number,
  oneToken = true,
): Promise<{ queue: string; jobs: Array<{ id: string; claimToken: string }> }> {
  const queue = `checks_${++n}`;
  await store.queueCreate({ name: queue, config: resolveQueueConfig(), now: T0 });
  await store.jobInsertMany({ jobs: Array.from({ length: count }, () => newJob(queue)), now: T0 });
  const lease = (await store.leaseAcquire({ queue, partition: 0, owner: "o", ttlMs: 600_000, now: T0 }))!;
  const claimed = await store.jobClaimMany({ queue, partition: 0, epoch: lease.epoch, limit: count, now: T0 });
  const plans: HandOutPlan[] = claimed.map((j, i) => ({
    id: j.id,
    claimToken: oneToken ? "tok" : `tok${i}`,
    claimExpiresAt: T0 + claimMs,
    retryDelayMs: 0,
  }));
  expect(await store.jobStartMany({ queue, partition: 0, epoch: lease.epoch, plans, now: T0 })).toHaveLength(count);
  return { queue, jobs: plans.map((p) => ({ id: p.id, claimToken: p.claimToken })) };
}

/** The checks that list a job of `queue`: due time and the listed ids. */
async function checksOf(queue: string): Promise<Array<{ dueAt: number; ids: string[] }>> {
  const rows = await shard.session((c) =>
    select<{ due_at: number | string; job_ids: string }>(c, "SELECT due_at, job_ids FROM claim_checks ORDER BY id"),
  );
  return rows
    .map((r) => ({ dueAt: Number(r.due_at), ids: r.job_ids.split(" ").filter((id) => id.startsWith(`${queue}.`)) }))
    .filter((r) => r.ids.length > 0);
}

const stateOf = async (id: string) => (await store.jobGetMany({ ids: [id] }))[0]?.state;

describe("mysql claim checks", () => {
  it("a start adds one check per deadline; an ACK leaves it; the sweep at the deadline deletes it and expires nothing", async () => {
    for (const oneToken of [true, false]) {
      const { queue, jobs } = await started(3, 1000, oneToken);
      expect(await checksOf(queue)).toEqual([{ dueAt: T0 + 1000, ids: jobs.map((j) => j.id) }]);
      await store.jobCompleteMany({ items: jobs.map((j) => ({ ...j, customStatus: "" })), now: T0 + 10 });
      expect(await checksOf(queue)).toHaveLength(1);
      const { expired } = await store.jobClaimExpire({ now: T0 + 1000, limit: 100 });
      expect(expired.filter((j) => j.queue === queue)).toEqual([]);
      expect(await checksOf(queue)).toEqual([]);
    }
  });

  it("a checkpoint that extends the claim adds a check at the new deadline, which the first check leaves for later", async () => {
    const { queue, jobs } = await started(1, 1000);
    const [job] = jobs;
    const extended = {
      ...job!,
      claimExpiresAt: T0 + 5000,
      moveToPending: false,
      runAfter: 0,
      attemptsAllowed: 0,
      customStatus: "",
    };
    expect((await store.jobCheckpointMany({ items: [extended], now: T0 + 500 }))[0]!.outcome).toBe("acknowledged");
    expect((await checksOf(queue)).map((c) => c.dueAt)).toEqual([T0 + 1000, T0 + 5000]);
    await store.jobClaimExpire({ now: T0 + 1000, limit: 100 });
    expect(await stateOf(job!.id)).toBe("running");
    expect((await checksOf(queue)).map((c) => c.dueAt)).toEqual([T0 + 5000]);
    const { expired } = await store.jobClaimExpire({ now: T0 + 5000, limit: 100 });
    expect(expired.map((j) => j.id)).toContain(job!.id);
    expect(await checksOf(queue)).toEqual([]);
  });

  it("a sweep cut short by its limit keeps the jobs of the check it did not look at", async () => {
    const { queue, jobs } = await started(5, 1000);
    const first = await store.jobClaimExpire({ now: T0 + 1000, limit: 2 });
    expect(first.expired.map((j) => j.id)).toEqual(jobs.slice(0, 2).map((j) => j.id));
    expect(await checksOf(queue)).toEqual([{ dueAt: T0 + 1000, ids: jobs.slice(2).map((j) => j.id) }]);
    const rest = await store.jobClaimExpire({ now: T0 + 1000, limit: 100 });
    expect(rest.expired.map((j) => j.id).filter((id) => id.startsWith(`${queue}.`))).toEqual(
      jobs.slice(2).map((j) => j.id),
    );
    expect(await checksOf(queue)).toEqual([]);
  });

  it("waits for a job an ACK holds locked instead of skipping it, so a rolled-back ACK still leaves the claim to run out", async () => {
    const { jobs } = await started(1, 1000);
    const [job] = jobs;
    await shard.session(async (c) => {
      await c.query("START TRANSACTION");
      await c.query("SELECT id FROM jobs WHERE id = ? FOR UPDATE", [job!.id]);
      const sweep = store.jobClaimExpire({ now: T0 + 1000, limit: 100 });
      // The sweep is blocked on the row; the "ACK" then fails and rolls back.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await c.query("ROLLBACK");
      const { expired } = await sweep;
      expect(expired.map((j) => j.id)).toContain(job!.id);
    });
    expect(await stateOf(job!.id)).toBe("pending");
  });

  it("reports a due check another sweep holds as due, so the caller looks again", async () => {
    const { queue, jobs } = await started(1, 1000);
    await shard.session(async (c) => {
      await c.query("START TRANSACTION");
      await c.query("SELECT id FROM claim_checks WHERE job_ids = ? FOR UPDATE", [jobs[0]!.id]);
      const { expired, nextExpiryAt } = await store.jobClaimExpire({ now: T0 + 1000, limit: 100 });
      expect(expired.filter((j) => j.queue === queue)).toEqual([]);
      expect(nextExpiryAt).toBe(T0 + 1000);
      await c.query("ROLLBACK");
    });
    expect((await store.jobClaimExpire({ now: T0 + 1000, limit: 100 })).expired.map((j) => j.id)).toContain(
      jobs[0]!.id,
    );
  });

  it("reports the next check ahead as the time to look again, no sooner than 100 ms ahead", async () => {
    const { queue } = await started(1, 60_000);
    const { nextExpiryAt } = await store.jobClaimExpire({ now: T0 + 59_990, limit: 100 });
    expect(nextExpiryAt).toBe(T0 + 60_090);
    expect(await checksOf(queue)).toHaveLength(1);
  });
});
