import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { loadMigrations, migrate } from "../../src/store/mysql/migrate.js";
import { openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { Shard, select } from "../../src/store/mysql/shard.js";
import { newJob } from "../storetest/fixtures.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const shards: Shard[] = [];
const open = (url: string) => {
  const shard = new Shard(0, url, { retryForMs: 10_000, connectionLimit: 2 });
  shards.push(shard);
  return shard;
};

afterAll(() => dropDatabases(...shards));

describe("mysql schema migrations", () => {
  it("creates the database and applies every migration once, however many servers start together", async () => {
    const url = freshDatabaseUrl("migrate");
    const results = await Promise.all(Array.from({ length: 4 }, () => migrate(open(url))));
    const all = await loadMigrations();
    // GET_LOCK serialises the runs: one applies everything, the others find it done.
    expect(results.flatMap((r) => r.applied).sort()).toEqual(all.map((m) => m.name).sort());
    expect(results.every((r) => r.version === all[all.length - 1]!.version)).toBe(true);
    const rows = await open(url).session((c) =>
      select<{ version: number }>(c, "SELECT version FROM schema_migrations ORDER BY version"),
    );
    expect(rows.map((r) => Number(r.version))).toEqual(all.map((m) => m.version));
  });

  it("is a no-op on an up-to-date schema", async () => {
    const url = freshDatabaseUrl("migrate");
    await migrate(open(url));
    expect((await migrate(open(url))).applied).toEqual([]);
  });

  it("re-runs a migration whose statements ran but whose version was not recorded (a crash in between)", async () => {
    const url = freshDatabaseUrl("migrate");
    const shard = open(url);
    await migrate(shard);
    await shard.session((c) => c.query("DELETE FROM schema_migrations"));
    expect((await migrate(shard)).applied).toEqual((await loadMigrations()).map((m) => m.name));
  });

  it("upgrades a version-1 database that holds jobs: they keep working beside jobs with ordering keys", async () => {
    const url = freshDatabaseUrl("migrate");
    const shard = open(url);
    await shard.ensureDatabase();
    const [v1] = await loadMigrations();
    await shard.session(async (c) => {
      for (const statement of v1!.statements) await c.query(statement);
      await c.query("INSERT INTO queues (name, config, created_at) VALUES ('old', ?, 1)", [
        JSON.stringify(resolveQueueConfig()),
      ]);
      await c.query(
        "INSERT INTO jobs (id, queue, part, state, priority, run_after, attempts_allowed, attempts_remaining, attempt, custom_status, " +
          "created_at, updated_at, finished_at, claim_token, claim_expires_at, retry_delay_ms, buffer_epoch, body) " +
          "VALUES ('old.0.aaaaaaaaaaaa', 'old', 0, 'pending', 1, 1, 3, 3, 0, '', 1, 1, 0, '', 0, 0, 0, 'x'), " +
          "('old.0.bbbbbbbbbbbb', 'old', 0, 'succeeded', 1, 1, 3, 2, 1, '', 1, 1, 1, 'tok', 0, 0, 0, 'y'), " +
          "('old.0.cccccccccccc', 'old', 0, 'running', 1, 1, 3, 2, 1, '', 1, 1, 0, 'tok', 5, 0, 0, 'z')",
      );
    });
    const store = await openMysqlStore([url], { connectionLimit: 2 });
    try {
      const [kept] = await store.jobGetMany({ ids: ["old.0.aaaaaaaaaaaa"] });
      expect(kept).toMatchObject({ state: "pending", orderingKey: "" });
      expect(kept!.workflow).toBeUndefined(); // version 8's column is NULL for the old rows: no workflow job
      expect(kept!.traceparent).toBeUndefined(); // and version 10's: enqueued outside a trace
      const ids = await store.jobInsertMany({
        jobs: [newJob("old", { orderingKey: "k" }, 2), newJob("old", { orderingKey: "k" }, 2)],
        now: 2,
      });
      expect((await store.jobGetMany({ ids })).map((j) => j!.state)).toEqual(["pending", "waiting"]);
      const lease = (await store.leaseAcquire({ queue: "old", partition: 0, owner: "o", ttlMs: 1000, now: 2 }))!;
      const claimed = await store.jobClaimMany({ queue: "old", partition: 0, epoch: lease.epoch, limit: 10, now: 2 });
      expect(claimed.map((j) => j.id)).toEqual(["old.0.aaaaaaaaaaaa", ids[0]]);
      // Version 5's generated columns were filled for the old rows: the finished job is
      // counted and collected through jobs_finished, its claim token reads back unpadded.
      const [done] = await store.jobGetMany({ ids: ["old.0.bbbbbbbbbbbb"] });
      expect(done).toMatchObject({ state: "succeeded", claimToken: "tok" });
      expect(await store.queueStats({ name: "old", now: 2 })).toMatchObject({
        pending: 3,
        running: 1,
        succeeded: 1,
        failed: 0,
      });
      // Version 6 gave the job running at the upgrade a claim check: its claim still runs out.
      const { expired } = await store.jobClaimExpire({ now: 5, limit: 10 });
      expect(expired.map((j) => j.id)).toEqual(["old.0.cccccccccccc"]);
      expect(await store.jobDeleteFinished({ queue: "old", succeededBefore: 2, failedBefore: 2, limit: 10 })).toBe(1);
    } finally {
      await store.close();
    }
  });
});
