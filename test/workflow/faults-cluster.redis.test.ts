/** The diamond under faults on a cluster (3 brokers + 1 frontend) on Redis (database 10 of the test Redis, emptied before and after): one broker SIGKILLed. */
import { redisUrl } from "../../server/test/services.js";
import { freshRedisDb } from "../cluster/harness.js";
import { clusterWithBrokerKill, diamondFaultSuite } from "./faults.js";

diamondFaultSuite("a Redis cluster", async () => {
  const db = await freshRedisDb(redisUrl(), 10);
  const deployment = await clusterWithBrokerKill(db.url);
  return { ...deployment, stop: () => deployment.stop().finally(db.dispose) };
});
