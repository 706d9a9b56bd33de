import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations, migrate } from "../../src/store/mysql/migrate.js";
import { select, Shard } from "../../src/store/mysql/shard.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const shards: Shard[] = [];
const open = (url: string) => {
  const shard = new Shard(0, url, { retryForMs: 10_000, connectionLimit: 2 });
  shards.push(shard);
  return shard;
};

afterAll(async () => {
  await Promise.all(shards.map((s) => s.close()));
  await dropDatabases();
});

describe("mysql schema migrations", () => {
  it("creates the database and applies every migration once, however many servers start together", async () => {
    const url = freshDatabaseUrl("migrate");
    const results = await Promise.all(Array.from({ length: 4 }, () => migrate(open(url))));
    const all = await loadMigrations();
    // GET_LOCK serialises the runs: one applies everything, the others find it done.
    expect(results.flatMap((r) => r.applied).sort()).toEqual(all.map((m) => m.name).sort());
    expect(results.every((r) => r.version === all[all.length - 1]!.version)).toBe(true);
    const rows = await open(url).session((c) => select<{ version: number }>(c, "SELECT version FROM schema_migrations ORDER BY version"));
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
});
