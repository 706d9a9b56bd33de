import { afterAll } from "vitest";
import { openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import { dropDatabases, freshDatabaseUrl } from "../store/mysql-harness.js";
import { describeScheduleService } from "./schedule-cases.js";

describeScheduleService("mysql", () => openMysqlStore([freshDatabaseUrl("schedules")], { connectionLimit: 4 }));

// (The server closed the store when it stopped.)
afterAll(() => dropDatabases());
