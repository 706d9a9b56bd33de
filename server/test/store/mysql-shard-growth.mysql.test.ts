import { createConnection } from "mysql2/promise";
import { afterAll, describe } from "vitest";
import { migrateUrls } from "../../src/store/mysql/migrate.js";
import { openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { parseMysqlUrl } from "../../src/store/mysql/shard.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";
import { shardGrowthTests } from "./shard-growth.js";

/** One statement on one database, outside the store (inspection and tampering). */
async function query<T>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const conn = await createConnection(parseMysqlUrl(url));
  try {
    return (await conn.query(sql, params))[0] as T[];
  } finally {
    await conn.end();
  }
}

describe("mysql store: adding shards", () => {
  // Each test: four fresh databases, a deployment of its own.
  shardGrowthTests(() => {
    const urls = Array.from({ length: 4 }, () => freshDatabaseUrl("grow"));
    return {
      open: (shards) =>
        openMysqlStore(
          shards.map((i) => urls[i]!),
          { connectionLimit: 2 },
        ),
      placement: async (queue) =>
        (await query<{ shards: string }>(urls[0]!, "SELECT shards FROM queue_placement WHERE name = ?", [queue]))[0]
          ?.shards,
      dropPlacement: async (queue) =>
        void (await query(urls[0]!, "DELETE FROM queue_placement WHERE name = ?", [queue])),
      holdsJobs: async (shard, queue, partition) =>
        Number(
          (
            await query<{ n: number }>(urls[shard]!, "SELECT COUNT(*) AS n FROM jobs WHERE queue = ? AND part = ?", [
              queue,
              partition,
            ])
          )[0]!.n,
        ) > 0,
      pollute: async (shard) => {
        // Another deployment's data, from before shard indexes were recorded.
        await migrateUrls([urls[shard]!]);
        await query(urls[shard]!, "INSERT INTO queues (name, config, created_at) VALUES ('stray', '{}', 0)");
      },
    };
  });
});

afterAll(() => dropDatabases());
