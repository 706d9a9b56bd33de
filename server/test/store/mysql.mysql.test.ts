import { afterAll } from "vitest";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { exerciseScheduleStore, exerciseStore, exerciseWorkflowStore } from "../storetest/index.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

// One database for this file; each open() is a new store (its own pool) on it. The suite
// uses a fresh queue per test, and filters the global claim sweep by queue.
const url = freshDatabaseUrl("suite");
const opened: MysqlStore[] = [];
const open = async () => {
  const store = await openMysqlStore([url], { connectionLimit: 4 });
  opened.push(store);
  return store;
};

exerciseStore("mysql", open);
exerciseWorkflowStore("mysql", open);
exerciseScheduleStore("mysql", open);

afterAll(() => dropDatabases(...opened));
