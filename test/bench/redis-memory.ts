/**
 * Redis memory per pending job: inserts 1M pending jobs with 200-byte bodies (batches of
 * 1000, the enqueue maximum) under a fresh key prefix, prints the used_memory delta per
 * job, then deletes the queue (and times that). Numbers go in docs/redis.md.
 *
 *   npx tsx test/bench/redis-memory.ts [redis://host:port] [jobs]
 * The URL defaults to $RUNLATER_TEST_REDIS_URL. Use a server you do not mind filling
 * (about 1.3 GB at the default settings).
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { newJobId } from "../../server/src/domain/job-id.js";
import type { NewJob } from "../../server/src/domain/job-record.js";
import { resolveQueueConfig } from "../../server/src/domain/queue-config.js";
import { openRedisStore } from "../../server/src/store/redis/redis-store.js";

const url = process.argv[2] ?? process.env.RUNLATER_TEST_REDIS_URL;
const total = Number(process.argv[3] ?? 1_000_000);
if (!url) throw new Error("give a redis:// URL (or set RUNLATER_TEST_REDIS_URL)");

const batch = 1000;
const prefix = `bench:${randomBytes(4).toString("hex")}`;
const admin = new Redis(url);
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await admin.info("memory"))![1]);

const store = await openRedisStore({ urls: [url], prefix });
const queue = "bench_memory";
await store.queueCreate({ name: queue, config: resolveQueueConfig({}), now: Date.now() });
const before = await usedMemory();
const started = Date.now();
const body = randomBytes(200);
for (let done = 0; done < total; done += batch) {
  const now = Date.now();
  const jobs: NewJob[] = Array.from({ length: Math.min(batch, total - done) }, () => ({
    id: newJobId(queue, 0, now),
    queue,
    partition: 0,
    priority: 1,
    body,
    runAfter: now,
    attemptsAllowed: 11,
    customStatus: "",
    createdAt: now,
    idempotencyKey: "",
    orderingKey: "",
  }));
  await store.jobInsertMany({ jobs, now });
}
const inserted = Date.now() - started;
const after = await usedMemory();
const [sample] = await store.jobPeekMany({ queue, limit: 1, now: Date.now() });
const encoding = await admin.object("ENCODING", `${prefix}:{q:${queue}:0}:j:${sample!.id}`);
const deleteStarted = Date.now();
await store.queueDelete({ name: queue });
const deleted = Date.now() - deleteStarted;
const [redisVersion] = /redis_version:(\S+)/.exec(await admin.info("server"))!.slice(1);

console.log(`redis ${redisVersion}: job encoding ${encoding}`);
console.log(
  `${total} pending jobs, 200-byte bodies: used_memory +${after - before} bytes = ${((after - before) / total).toFixed(0)} bytes per job`,
);
console.log(
  `insert ${inserted} ms (${Math.round(total / (inserted / 1000))} jobs/s in batches of ${batch}), delete queue ${deleted} ms`,
);
await store.close();
admin.disconnect();
