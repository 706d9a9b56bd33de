/** The diamond under faults on Redis (database 11 of the test Redis, emptied before and after): the server SIGKILLed twice and restarted on the same store and port. */
import { redisUrl } from "../../server/test/services.js";
import { freshRedisDb } from "../cluster/harness.js";
import { diamondFaultSuite, restartedServer } from "./faults.js";

diamondFaultSuite("redis", async () => {
  const db = await freshRedisDb(redisUrl(), 11);
  const deployment = await restartedServer(db.url);
  return { ...deployment, stop: () => deployment.stop().finally(db.dispose) };
});
