/** Broker failover with real processes on MariaDB (a fresh database, created by the servers, dropped after). */
import { dropDatabases, freshDatabaseUrl } from "../../server/test/store/mysql-harness.js";
import { failoverSuite } from "./scenarios.js";

failoverSuite("mysql", async () => ({ url: freshDatabaseUrl("cluster"), dispose: dropDatabases }));
