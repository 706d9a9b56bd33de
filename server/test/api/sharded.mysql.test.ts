import { afterAll } from "vitest";
import { openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { dropDatabases, freshDatabaseUrl } from "../store/mysql-harness.js";
import { describeShardedService } from "./sharded-cases.js";

const urls = [freshDatabaseUrl("sharded"), freshDatabaseUrl("sharded"), freshDatabaseUrl("sharded")];
describeShardedService("mysql", () => openMysqlStore(urls, { connectionLimit: 4 }));

// (The server closed the store when it stopped.)
afterAll(() => dropDatabases());
