/** Broker failover with real processes on Redis (database 13 of the test Redis, emptied before and after). */
import { redisUrl } from "../../server/test/services.js";
import { freshRedisDb } from "./harness.js";
import { failoverSuite } from "./scenarios.js";

failoverSuite("redis", () => freshRedisDb(redisUrl(), 13));
