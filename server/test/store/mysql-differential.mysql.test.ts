/**
 * The MySQL store's SQL against transitions.ts: seeded random sequences of store calls on
 * the memory store and on a 2-shard MySQL store must agree after every step
 * (storetest/differential.ts). The databases are emptied between sequences, because the
 * claim-timeout sweep is global.
 */
import { afterAll, describe, it } from "vitest";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { Shard } from "../../src/store/mysql/shard.js";
import { runDifferential } from "../storetest/differential.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const urls = [freshDatabaseUrl("diff"), freshDatabaseUrl("diff")];
let store: MysqlStore | undefined;

async function emptyStore(): Promise<MysqlStore> {
  store ??= await openMysqlStore(urls, { connectionLimit: 4 });
  for (const [i, url] of urls.entries()) {
    const shard = new Shard(i, url, { retryForMs: 5000, connectionLimit: 1 });
    await shard.session(async (c) => {
      for (const table of ["jobs", "leases", "queues"]) await c.query(`DELETE FROM ${table}`);
    });
    await shard.close();
  }
  return store;
}

afterAll(() => dropDatabases(store));

describe("mysql store against the memory store", () => {
  // RUNLATER_DIFF_SEEDS=500 for a longer soak; a failing seed replays exactly.
  const seeds = Number(process.env.RUNLATER_DIFF_SEEDS ?? 8);
  for (let seed = 1; seed <= seeds; seed++) {
    it(`agrees on every job after each step of random sequence ${seed}`, async () =>
      runDifferential(seed, await emptyStore()));
  }
});
