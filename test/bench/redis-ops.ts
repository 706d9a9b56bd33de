/**
 * Per-operation cost of the Redis store (insert, claim, start, complete): the time seen by
 * the server (client round trip included) and the time Redis itself spent in the scripts
 * (INFO commandstats), per job.
 *
 *   RUNLATER_TEST_REDIS_URL=redis://127.0.0.1:6379 npx tsx test/bench/redis-ops.ts
 *       rounds of 1000-job batches on a small queue, best of 7 per operation
 *   … redis-ops.ts --backlog 200000 [--claim 250] [--batch 100] [--jobs 100000]
 *       what the processed phase of `npm run bench` asks of Redis: a backlog of pending
 *       jobs, claims of --claim jobs, hand-outs and ACKs of --batch jobs (one claim token
 *       per hand-out, as the broker sends), --jobs of them; prints per operation the time
 *       inside Redis per job and how it splits between the commands the scripts call (the
 *       rest of a script's time is the Lua around them).
 * Use a Redis you do not mind filling; the keys go under a fresh prefix and are left there.
 */
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { newJobId } from "../../server/src/domain/job-id.js";
import { resolveQueueConfig } from "../../server/src/domain/queue-config.js";
import { openRedisStore } from "../../server/src/store/redis/redis-store.js";

const { values: args } = parseArgs({
  options: {
    backlog: { type: "string" },
    claim: { type: "string", default: "250" },
    batch: { type: "string", default: "100" },
    jobs: { type: "string", default: "100000" },
  },
});

const url = process.env.RUNLATER_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const store = await openRedisStore({ urls: [url], prefix: `ops${Date.now()}` });
const admin = new Redis(url);
const q = "ops";
const now = Date.now();
await store.queueCreate({ name: q, config: resolveQueueConfig({}), now });
const lease = (await store.leaseAcquire({ queue: q, partition: 0, owner: "o", ttlMs: 600_000, now }))!;
const body = new Uint8Array(200);
const newJobs = (n: number) =>
  Array.from({ length: n }, () => ({
    id: newJobId(q, 0, now),
    queue: q,
    partition: 0,
    priority: 1,
    body,
    runAfter: now,
    attemptsAllowed: 3,
    customStatus: "",
    createdAt: now,
    idempotencyKey: "",
    orderingKey: "",
  }));

/** Microseconds Redis spent per command since the last reset (scripts under "evalsha"). */
async function commandMicros(): Promise<Map<string, number>> {
  const info = await admin.info("commandstats");
  const micros = new Map<string, number>();
  for (const m of info.matchAll(/cmdstat_(\w+):calls=\d+,usec=(\d+)/g)) {
    const name = m[1] === "eval" ? "evalsha" : m[1]!; // a script's first call loads it
    micros.set(name, (micros.get(name) ?? 0) + Number(m[2]));
  }
  micros.delete("info");
  micros.delete("config");
  return micros;
}

/** Runs one store call between a stats reset and a read: wall µs and Redis µs by command. */
async function measure<T>(f: () => Promise<T>): Promise<{ result: T; wall: number; micros: Map<string, number> }> {
  await admin.config("RESETSTAT");
  const t = performance.now();
  const result = await f();
  const wall = (performance.now() - t) * 1000;
  return { result, wall, micros: await commandMicros() };
}

if (args.backlog === undefined) await smallRounds();
else await backlogRun(Number(args.backlog), Number(args.claim), Number(args.batch), Number(args.jobs));
await store.close();
admin.disconnect();

async function smallRounds(): Promise<void> {
  const B = 1000;
  const ROUNDS = 7;
  // Best of the rounds per operation: this machine's figures jump between runs.
  const best = new Map<string, { wall: number; inside: number }>();
  const time = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const { result, wall, micros } = await measure(f);
    const b = best.get(name) ?? { wall: Infinity, inside: Infinity };
    best.set(name, { wall: Math.min(b.wall, wall / B), inside: Math.min(b.inside, (micros.get("evalsha") ?? 0) / B) });
    return result;
  };
  for (let round = 0; round < ROUNDS; round++) {
    await time("insert", () => store.jobInsertMany({ jobs: newJobs(B), now }));
    const claimed = await time("claim", () =>
      store.jobClaimMany({ queue: q, partition: 0, epoch: lease.epoch, limit: B, now }),
    );
    const plans = claimed.map((j) => ({
      id: j.id,
      claimToken: "tok",
      claimExpiresAt: now + 60000,
      retryDelayMs: 1000,
    }));
    const started = await time("start", () =>
      store.jobStartMany({ queue: q, partition: 0, epoch: lease.epoch, plans, now }),
    );
    await time("complete", () =>
      store.jobCompleteMany({ items: started.map((id) => ({ id, claimToken: "tok", customStatus: "" })), now }),
    );
  }
  for (const [name, b] of best) {
    console.log(
      `${name.padEnd(9)} ${b.wall.toFixed(1).padStart(5)} µs/job seen by the server, ${b.inside.toFixed(1).padStart(5)} µs/job inside Redis (best of ${ROUNDS})`,
    );
  }
}

async function backlogRun(backlog: number, claimSize: number, batch: number, jobs: number): Promise<void> {
  for (let i = 0; i < backlog; i += 1000)
    await store.jobInsertMany({ jobs: newJobs(Math.min(1000, backlog - i)), now });
  const totals = new Map<string, { wall: number; micros: Map<string, number> }>();
  const time = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const { result, wall, micros } = await measure(f);
    const total = totals.get(name) ?? { wall: 0, micros: new Map() };
    total.wall += wall;
    for (const [command, us] of micros) total.micros.set(command, (total.micros.get(command) ?? 0) + us);
    totals.set(name, total);
    return result;
  };
  let done = 0;
  let token = 0;
  while (done < Math.min(jobs, backlog)) {
    const claimed = await time("claim", () =>
      store.jobClaimMany({ queue: q, partition: 0, epoch: lease.epoch, limit: claimSize, now }),
    );
    if (claimed.length === 0) break;
    for (let i = 0; i < claimed.length; i += batch) {
      const claimToken = `tok${token++}`;
      const plans = claimed
        .slice(i, i + batch)
        .map((j) => ({ id: j.id, claimToken, claimExpiresAt: now + 60000, retryDelayMs: 1000 }));
      const started = await time("start", () =>
        store.jobStartMany({ queue: q, partition: 0, epoch: lease.epoch, plans, now }),
      );
      await time("complete", () =>
        store.jobCompleteMany({ items: started.map((id) => ({ id, claimToken, customStatus: "" })), now }),
      );
    }
    done += claimed.length;
  }
  console.log(
    `${done} jobs from a backlog of ${backlog}: claims of ${claimSize}, hand-outs and ACKs of ${batch}; µs per job`,
  );
  for (const [name, total] of totals) {
    const inside = total.micros.get("evalsha") ?? 0;
    const commands = [...total.micros].filter(([command]) => command !== "evalsha").sort((a, b) => b[1] - a[1]);
    const called = commands.reduce((sum, [, us]) => sum + us, 0);
    const split = commands
      .filter(([, us]) => us / done >= 0.05)
      .map(([command, us]) => `${command} ${(us / done).toFixed(2)}`);
    console.log(
      `${name.padEnd(9)} ${(total.wall / done).toFixed(1).padStart(5)} seen by the server, ${(inside / done).toFixed(1).padStart(5)} inside Redis: ` +
        `commands ${(called / done).toFixed(1)} (${split.join(", ")}), Lua around them ${((inside - called) / done).toFixed(1)}`,
    );
  }
}
