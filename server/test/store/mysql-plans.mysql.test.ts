/**
 * MySQL store internals the shared suite cannot see: the hot queries use the indexes
 * docs/mysql.md says they use (no full scans, no scanning of future jobs), and lease
 * epochs outlive a queue's deletion.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobRecord } from "../../src/domain/job-record.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { addClaimChecks } from "../../src/store/mysql/claim-checks.js";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import * as sql from "../../src/store/mysql/queries.js";
import { keyBytes } from "../../src/store/mysql/rows.js";
import { Shard } from "../../src/store/mysql/shard.js";
import { newJob, T0 } from "../storetest/fixtures.js";
import { dropDatabases, explain as explainOn, freshDatabaseUrl } from "./mysql-harness.js";

const url = freshDatabaseUrl("plans");
let store: MysqlStore;
let shard: Shard;
/** Jobs the setup handed out: 300 then succeed, 100 fail, 200 stay running. */
let started: JobRecord[];
const queue = "plans_q";

const explain = (statement: string, params: unknown[]) => explainOn(shard, statement, params);

beforeAll(async () => {
  store = await openMysqlStore([url], { connectionLimit: 4 });
  shard = new Shard(0, url, { retryForMs: 5000, connectionLimit: 1 });
  await store.queueCreate({ name: queue, config: resolveQueueConfig({ partitions: 2 }), now: T0 });
  // A queue with history: many pending jobs (due and future, three priorities), some running, some finished.
  for (let batch = 0; batch < 6; batch++) {
    const jobs = Array.from({ length: 1000 }, (_, i) =>
      newJob(queue, {
        partition: i % 2,
        priority: 1 + (i % 3),
        runAfter: T0 + ((i * 37) % 2000) - 1000,
        idempotencyKey: i % 10 === 0 ? `k${batch}-${i}` : "",
      }),
    );
    await store.jobInsertMany({ jobs, now: T0 });
  }
  // Ordering keys: 50 keys with 40 jobs each (one head, 39 waiting).
  for (let batch = 0; batch < 2; batch++) {
    const jobs = Array.from({ length: 1000 }, (_, i) => newJob(queue, { partition: 0, orderingKey: `key-${i % 50}` }));
    await store.jobInsertMany({ jobs, now: T0 });
  }
  const lease = await store.leaseAcquire({ queue, partition: 0, owner: "plans", ttlMs: 60_000, now: T0 });
  const claimed = await store.jobClaimMany({ queue, partition: 0, epoch: lease!.epoch, limit: 600, now: T0 });
  const startedIds = await store.jobStartMany({
    queue,
    partition: 0,
    epoch: lease!.epoch,
    plans: claimed.map((j) => ({ id: j.id, claimToken: `t${j.id}`, claimExpiresAt: T0 + 30_000, retryDelayMs: 1000 })),
    now: T0,
  });
  started = (await store.jobGetMany({ ids: startedIds })).map((j) => j!);
  await store.jobCompleteMany({
    items: started.slice(0, 300).map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "" })),
    now: T0 + 10,
  });
  await store.jobFailMany({
    items: started
      .slice(300, 400)
      .map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "", noRetry: true })),
    now: T0 + 10,
  });
  // Claim checks of many hand-outs: one per deadline, as a busy server leaves them.
  await shard.session((c) =>
    addClaimChecks(
      c,
      Array.from({ length: 2000 }, (_, i) => ({ id: `${queue}.1.check${i}`, claimExpiresAt: T0 + 30_000 + i })),
    ),
  );
  await shard.session((c) => c.query("ANALYZE TABLE jobs, ordering_keys, ordering_members, claim_checks"));
}, 60_000);

afterAll(() => dropDatabases(store, shard));

describe("mysql query plans", () => {
  it("finds each priority level's next due time with one index dive per level", async () => {
    const plan = await explain(sql.PENDING_LEVELS, Array.from({ length: 10 }, () => [queue, 0]).flat());
    for (const row of plan) expect(row.Extra).toMatch(/Select tables optimized away|No matching min\/max row/);
  });

  it("claims one level with a range scan of jobs_claim in dequeue order, from its start or after the cursor (no filesort)", async () => {
    for (const [statement, params] of [
      [sql.claimRows(false, false), [queue, 0, 1, T0, 500]],
      [sql.claimRows(false, true), [queue, 0, 1, T0, T0 - 500, T0 - 500, 10, 500]],
      [sql.claimRows(true, true), [100, queue, 0, 1, T0, T0 - 500, T0 - 500, 10, 500]],
    ] as const) {
      const [row] = await explain(statement, [...params]);
      expect(row).toMatchObject({ type: "range", key: "jobs_claim" });
      expect(row!.Extra).not.toMatch(/filesort/);
    }
  });

  it("looks behind the cursor and for the next due job from jobs_claim alone (index-only, no filesort)", async () => {
    for (const [statement, params] of [
      [sql.levelPlaces(true, "upTo"), [queue, 0, 1, T0, T0 - 500, T0 - 500, 10, 4000]],
      [sql.levelPlaces(false, "after"), [queue, 0, 1, T0 - 500, T0 - 500, 10, 4000]],
      [sql.levelPlaces(false), [queue, 0, 1, 4000]],
    ] as const) {
      const [row] = await explain(statement, [...params]);
      expect(row).toMatchObject({ key: "jobs_claim" });
      expect(row!.type).toMatch(/^(range|ref)$/);
      expect(row!.Extra).toMatch(/Using index/);
      expect(row!.Extra).not.toMatch(/filesort/);
    }
  });

  it("starts and acks by primary key", async () => {
    const ids = [`${queue}.0.aaaaaaaaaaaa`, `${queue}.0.bbbbbbbbbbbb`];
    for (const statement of [sql.selectPendingLocked(2), sql.selectJobsMetaLocked(2), sql.pendingRows(false, 2)]) {
      const [row] = await explain(statement, ids);
      expect(row).toMatchObject({ type: "range", key: "PRIMARY" });
    }
    // The fast paths: the lease row by its primary key (a const table), the jobs by theirs.
    const start = await explain(sql.startGroup("state = ?, updated_at = ?", 2), [queue, 0, 1, "running", T0, ...ids]);
    expect(start.find((r) => r.key === "PRIMARY" && r.type === "range")).toBeDefined();
    for (const row of start) expect(row.key).toBe("PRIMARY");
    const [ack] = await explain(sql.ackGroup("state = ?, updated_at = ?", 2), ["succeeded", T0, ...ids, "t"]);
    expect(ack).toMatchObject({ type: "range", key: "PRIMARY" });
  });

  it("counts a queue's jobs for its stats from jobs_claim and jobs_finished alone (index-only)", async () => {
    const plan = await explain(sql.QUEUE_STATS, [T0, T0, queue, queue]);
    const reads = plan.filter((r) => r.key !== null);
    expect(reads.map((r) => r.key).sort()).toEqual(["jobs_claim", "jobs_finished"]);
    for (const row of reads) expect(row.Extra).toMatch(/Using index/);
  });

  it("a new owner finds rows an earlier runlater marked buffered in jobs_claim", async () => {
    const [row] = await explain(sql.releaseBufferedBelow("state = ?"), ["pending", queue, 0, 5, 1000]);
    expect(row).toMatchObject({ type: "range", key: "jobs_claim" });
  });

  it("sweeps due claim checks from claim_checks_due, their jobs by primary key, and collects finished jobs from jobs_finished", async () => {
    // A few checks due, and every one (a backlog): an ordered range that stops at LIMIT either way.
    for (const now of [T0 + 30_100, T0 + 40_000]) {
      const [due] = await explain(sql.CLAIM_CHECKS_DUE, [now, 100]);
      expect(due).toMatchObject({ type: "range", key: "claim_checks_due" });
      expect(due!.Extra).not.toMatch(/filesort/);
    }
    const ids = started.slice(400, 500).map((j) => j.id);
    const [jobs] = await explain(sql.expiredClaims(ids.length), [...ids, T0 + 30_100]);
    expect(jobs).toMatchObject({ type: "range", key: "PRIMARY" });
    const [next] = await explain(sql.NEXT_CLAIM_CHECK, []);
    expect(next!.Extra).toMatch(/Select tables optimized away/);
    const [gc] = await explain(sql.FINISHED_EXPIRED, [queue, "succeeded", T0 + 100, 1000]);
    expect(gc).toMatchObject({ type: "range", key: "jobs_finished" });
    expect(gc!.Extra).not.toMatch(/filesort/);
  });

  it("retries failed jobs oldest first from jobs_finished, without sorting", async () => {
    const [row] = await explain(sql.failedOldest(false), [queue, 1000]);
    expect(row).toMatchObject({ key: "jobs_finished" });
    expect(row!.Extra).not.toMatch(/filesort/);
  });

  it("finds ordering keys' heads with one primary-key dive per key, and locks keys by primary key", async () => {
    const keys = [queue, 0, keyBytes("key-1"), queue, 0, keyBytes("key-2")];
    const heads = await explain(sql.orderingHeads(2), keys);
    for (const row of heads.filter((r) => r.key !== "PRIMARY" || r.type !== "eq_ref")) {
      expect(row).toMatchObject({ key: "PRIMARY" });
      expect(row.type).toMatch(/^(ref|range)$/);
      expect(row.Extra ?? "").not.toMatch(/filesort/);
    }
    for (const statement of [sql.orderingKeysLock(2), sql.orderingKeysSelect(2)]) {
      expect((await explain(statement, keys))[0]).toMatchObject({ type: "range", key: "PRIMARY" });
    }
    expect((await explain(sql.orderingMembersDelete(2), ["a", "b"]))[0]).toMatchObject({ key: "ordering_members_job" });
  });

  it("resolves idempotency keys from their unique index", async () => {
    const [row] = await explain(sql.idempotencyLookup(2), [queue, "k0-0", "k1-10"]);
    expect(row).toMatchObject({ key: "jobs_idempotency" });
  });
});

describe("mysql leases", () => {
  it("keep their epoch when the queue is deleted and created again, so an old owner stays fenced", async () => {
    const q = "plans_epochs";
    await store.queueCreate({ name: q, config: resolveQueueConfig(), now: T0 });
    const a = (await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 }))!;
    await store.queueDelete({ name: q });
    await store.queueCreate({ name: q, config: resolveQueueConfig(), now: T0 });
    const b = (await store.leaseAcquire({ queue: q, partition: 0, owner: "b", ttlMs: 1000, now: T0 + 1 }))!;
    expect(b.epoch).toBeGreaterThan(a.epoch);
    await store.jobInsertMany({ jobs: [newJob(q)], now: T0 });
    expect(await store.jobClaimMany({ queue: q, partition: 0, epoch: a.epoch, limit: 10, now: T0 + 1 })).toEqual([]);
  });
});
