/**
 * Per-operation cost of the Redis store on 1000-job batches (insert, claim, start,
 * complete), client round trip included: where the time goes on the hot path.
 *   RUNLATER_TEST_REDIS_URL=redis://127.0.0.1:6379 npx tsx test/bench/redis-ops.ts
 */
import { openRedisStore } from "../../server/src/store/redis/redis-store.js";
import { resolveQueueConfig } from "../../server/src/engine/queue-config.js";
import { newJobId } from "../../server/src/engine/job-id.js";
const store = await openRedisStore({ urls: [process.env.RUNLATER_TEST_REDIS_URL ?? "redis://127.0.0.1:6379"], prefix: `ops${Date.now()}` });
const q = "ops"; const now = Date.now();
await store.queueCreate({ name: q, config: resolveQueueConfig({}), now });
const lease = (await store.leaseAcquire({ queue: q, partition: 0, owner: "o", ttlMs: 60000, now }))!;
const B = 1000; const body = new Uint8Array(200);
const time = async (name: string, f: () => Promise<unknown>) => { const t = performance.now(); const r = await f(); console.log(name, ((performance.now() - t) * 1000 / B).toFixed(1), "µs/job"); return r; };
for (let round = 0; round < 3; round++) {
  await time("insert", () => store.jobInsertMany({ jobs: Array.from({ length: B }, () => ({ id: newJobId(q, 0, now), queue: q, partition: 0, priority: 1, body, runAfter: now, attemptsAllowed: 3, customStatus: "", createdAt: now, idempotencyKey: "", orderingKey: "" })), now }));
  const claimed = (await time("claim", () => store.jobClaimMany({ queue: q, partition: 0, epoch: lease.epoch, limit: B, now }))) as Array<{ id: string }>;
  const started = (await time("start", () => store.jobStartMany({ queue: q, partition: 0, epoch: lease.epoch, plans: claimed.map((j) => ({ id: j.id, claimToken: "t" + j.id, claimExpiresAt: now + 60000, retryDelayMs: 1000 })), now }))) as string[];
  await time("complete", () => store.jobCompleteMany({ items: started.map((id: string) => ({ id, claimToken: "t" + id, customStatus: "" })), now }));
}
await store.close();
