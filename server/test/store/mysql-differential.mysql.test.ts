/**
 * The MySQL store's SQL against transitions.ts: seeded random sequences of store calls on
 * the memory store and on a MySQL store must agree after every step
 * (storetest/differential.ts): on 2 shards, and, with workflow steps, on one (a store of
 * several shards keeps no workflows). The databases are emptied between sequences,
 * because the claim-timeout sweep is global.
 */
import { afterAll, describe, it } from "vitest";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { Shard } from "../../src/store/mysql/shard.js";
import { runDifferential } from "../storetest/differential.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const sharded = [freshDatabaseUrl("diff"), freshDatabaseUrl("diff")];
const single = [freshDatabaseUrl("diff")];
const stores = new Map<string[], MysqlStore>();

async function emptyStore(urls: string[]): Promise<MysqlStore> {
  let store = stores.get(urls);
  if (!store) stores.set(urls, (store = await openMysqlStore(urls, { connectionLimit: 4 })));
  for (const [i, url] of urls.entries()) {
    const shard = new Shard(i, url, { retryForMs: 5000, connectionLimit: 1 });
    await shard.session(async (c) => {
      for (const table of ["jobs", "leases", "queues", "workflow_instances", "workflow_versions", "schedules"])
        await c.query(`DELETE FROM ${table}`);
    });
    await shard.close();
  }
  return store;
}

afterAll(() => dropDatabases(...stores.values()));

describe("mysql store against the memory store", () => {
  // RUNLATER_DIFF_SEEDS=500 for a longer soak; a failing seed replays exactly.
  const seeds = Number(process.env.RUNLATER_DIFF_SEEDS ?? 8);
  for (let seed = 1; seed <= seeds; seed++) {
    it(`agrees on every job after each step of random sequence ${seed}`, async () =>
      runDifferential(seed, await emptyStore(sharded)));
    it(`agrees on every job and instance after each step of random sequence ${seed} with workflow steps`, async () =>
      runDifferential(seed, await emptyStore(single), { workflows: true }));
  }
});
