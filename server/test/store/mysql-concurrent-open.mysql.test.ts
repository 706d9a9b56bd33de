import { afterAll, describe, expect, it } from "vitest";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const opened: MysqlStore[] = [];

describe("mysql store: servers opening a new deployment at once", () => {
  it("all open: migrations and shard records race without a refusal", async () => {
    // A cluster's nodes start together on an empty database: each migrates and records the shards.
    const urls = [freshDatabaseUrl("concurrent"), freshDatabaseUrl("concurrent")];
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => openMysqlStore(urls, { connectionLimit: 2 })),
    );
    for (const r of results) if (r.status === "fulfilled") opened.push(r.value);
    expect(
      results.filter((r) => r.status === "rejected").map((r) => String((r as PromiseRejectedResult).reason)),
    ).toEqual([]);
  });
});

afterAll(() => dropDatabases(...opened));
