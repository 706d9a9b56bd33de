import { afterAll } from "vitest";
import { openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { dropDatabases, freshDatabaseUrl } from "../store/mysql-harness.js";
import { describeWorkflowService } from "./workflow-cases.js";

describeWorkflowService("mysql", () => openMysqlStore([freshDatabaseUrl("workflows")], { connectionLimit: 4 }));

// (The server closed the store when it stopped.)
afterAll(() => dropDatabases());
