/**
 * Per-operation cost of the Redis store on 1000-job batches (insert, claim, start,
 * complete): the time seen by the server (client round trip included) and the time
 * Redis itself spent in the scripts (INFO commandstats), per job.
 *   RUNLATER_TEST_REDIS_URL=redis://127.0.0.1:6379 npx tsx test/bench/redis-ops.ts
 */
import { Redis } from "ioredis";
import { openRedisStore } from "../../server/src/store/redis/redis-store.js";
import { resolveQueueConfig } from "../../server/src/engine/queue-config.js";
import { newJobId } from "../../server/src/engine/job-id.js";

const url = process.env.RUNLATER_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const store = await openRedisStore({ urls: [url], prefix: `ops${Date.now()}` });
const admin = new Redis(url);
const q = "ops";
const now = Date.now();
await store.queueCreate({ name: q, config: resolveQueueConfig({}), now });
const lease = (await store.leaseAcquire({ queue: q, partition: 0, owner: "o", ttlMs: 60000, now }))!;
const B = 1000;
const body = new Uint8Array(200);

/** Microseconds Redis spent in script calls since the last reset. */
async function scriptMicros(): Promise<number> {
  const info = await admin.info("commandstats");
  let total = 0;
  for (const m of info.matchAll(/cmdstat_(?:evalsha|eval):calls=\d+,usec=(\d+)/g)) total += Number(m[1]);
  return total;
}

const ROUNDS = 7;
/** Best of the rounds per operation: this machine's figures jump between runs. */
const best = new Map<string, { wall: number; inside: number }>();

async function time<T>(name: string, f: () => Promise<T>): Promise<T> {
  await admin.config("RESETSTAT");
  const t = performance.now();
  const r = await f();
  const wall = ((performance.now() - t) * 1000) / B;
  const inside = (await scriptMicros()) / B;
  const b = best.get(name) ?? { wall: Infinity, inside: Infinity };
  best.set(name, { wall: Math.min(b.wall, wall), inside: Math.min(b.inside, inside) });
  return r;
}

for (let round = 0; round < ROUNDS; round++) {
  const jobs = Array.from({ length: B }, () => ({ id: newJobId(q, 0, now), queue: q, partition: 0, priority: 1, body, runAfter: now, attemptsAllowed: 3, customStatus: "", createdAt: now, idempotencyKey: "", orderingKey: "" }));
  await time("insert", () => store.jobInsertMany({ jobs, now }));
  const claimed = await time("claim", () => store.jobClaimMany({ queue: q, partition: 0, epoch: lease.epoch, limit: B, now }));
  const plans = claimed.map((j) => ({ id: j.id, claimToken: "tok", claimExpiresAt: now + 60000, retryDelayMs: 1000 }));
  const started = await time("start", () => store.jobStartMany({ queue: q, partition: 0, epoch: lease.epoch, plans, now }));
  await time("complete", () => store.jobCompleteMany({ items: started.map((id) => ({ id, claimToken: "tok", customStatus: "" })), now }));
}
for (const [name, b] of best) {
  console.log(`${name.padEnd(9)} ${b.wall.toFixed(1).padStart(5)} µs/job seen by the server, ${b.inside.toFixed(1).padStart(5)} µs/job inside Redis (best of ${ROUNDS})`);
}
await store.close();
admin.disconnect();
