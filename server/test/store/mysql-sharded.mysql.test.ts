import { afterAll } from "vitest";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { exerciseStore, exerciseWorkflowsOnShards } from "../storetest/index.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

// The same suite over three shards (three databases): partitions, leases and jobs spread
// by their stored placement (store/placement.ts), queue metadata on shard 0.
const urls = [freshDatabaseUrl("shard"), freshDatabaseUrl("shard"), freshDatabaseUrl("shard")];
const opened: MysqlStore[] = [];

const open = async () => {
  const store = await openMysqlStore(urls, { connectionLimit: 4 });
  opened.push(store);
  return store;
};

exerciseStore("mysql, 3 shards", open);
exerciseWorkflowsOnShards("mysql, 3 shards", open);

afterAll(() => dropDatabases(...opened));
