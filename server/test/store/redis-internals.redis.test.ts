/**
 * Redis store internals the shared suite cannot see: no key outlives its queue or job,
 * shards can be appended but not removed or reordered, admin walks cross their chunk boundaries, and the Lua state
 * machine cuts custom statuses exactly as transitions.ts does.
 */
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { shardOf } from "../../src/store/redis/keys.js";
import { openRedisStore } from "../../src/store/redis/redis-store.js";
import type { Store } from "../../src/store/store.js";
import { createQueue, get, handOut, insert, lease, T0 } from "../storetest/fixtures.js";
import { cleanup, keysOf, openTestStore, shardUrls } from "./redis-helpers.js";

afterAll(cleanup);

/** The prefix a test store was opened with (private; read for key inspection only). */
const prefixOf = (store: Store) => (store as unknown as { keys: { prefix: string } }).keys.prefix;

describe("redis store internals", () => {
  it("deleteQueue leaves no key of the queue behind, whatever state its jobs were in", async () => {
    const store = await openTestStore(2);
    const q = await createQueue(store, { partitions: 4 });
    const other = await createQueue(store);
    await insert(store, other, [{}]);
    const [otherJob] = await handOut(store, other);
    const specs = Array.from({ length: 40 }, (_, i) => ({
      partition: i % 4,
      priority: 1 + (i % 3),
      idempotencyKey: i % 5 === 0 ? `k${i}` : "",
      runAfter: T0 + (i % 7 === 0 ? 60_000 : 0),
    }));
    await insert(store, q, specs);
    for (let partition = 0; partition < 4; partition++) {
      const running = await handOut(store, q, { partition, limit: 6 });
      await store.jobCompleteMany({
        items: running.slice(0, 2).map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "" })),
        now: T0,
      });
      await store.jobFailMany({
        items: running
          .slice(2, 4)
          .map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "", noRetry: true })),
        now: T0,
      });
      const epoch = (await store.leaseAcquire({ queue: q, partition, owner: "broker-a", ttlMs: 60_000, now: T0 }))!
        .epoch;
      await store.jobClaimMany({ queue: q, partition, epoch, limit: 2, now: T0 }); // buffered
    }
    expect(await store.queueDelete({ name: q })).toBe(true);
    const left = (await Promise.all(shardUrls(2).map((url) => keysOf(url, prefixOf(store))))).flat();
    expect(left.filter((k) => k.includes(`{q:${q}:`))).toEqual([]);
    // The shard-wide claim checks forgot the queue's jobs but kept the other queue's.
    const checks = await Promise.all(
      shardUrls(2).map(async (url) => {
        const client = new Redis(url);
        const names = await client.zrange(`${prefixOf(store)}:{shard}:checks`, "0", "-1");
        const listed = await Promise.all(names.map((name) => client.get(`${prefixOf(store)}:{shard}:checks:${name}`)));
        const counts = names.length > 0 ? await client.hmget(`${prefixOf(store)}:{shard}:checks-n`, ...names) : [];
        const fields = await client.hlen(`${prefixOf(store)}:{shard}:checks-n`);
        client.disconnect();
        return { listed, counts, fields };
      }),
    );
    expect(checks.flatMap((c) => c.listed)).toEqual([`${otherJob!.id} `]);
    expect(checks.flatMap((c) => c.counts)).toEqual(["1"]);
    expect(checks.reduce((n, c) => n + c.fields, 0)).toBe(1);
    expect((await store.jobClaimExpire({ now: T0 + 1e9, limit: 100 })).expired.map((j) => j.id)).toEqual([
      otherJob!.id,
    ]);
  });

  it("keeps one claim check per hand-out until its jobs have left; the sweep's limit cuts a check and leaves the rest due", async () => {
    const store = await openTestStore();
    const prefix = prefixOf(store);
    const admin = new Redis(shardUrls(1)[0]!);
    const checks = async () => {
      const names = await admin.zrange(`${prefix}:{shard}:checks`, "0", "-1", "WITHSCORES");
      const out: Array<{ name: string; due: number; count: string | null; listed: string | null }> = [];
      for (let i = 0; i < names.length; i += 2) {
        const name = names[i]!;
        out.push({
          name,
          due: Number(names[i + 1]),
          count: await admin.hget(`${prefix}:{shard}:checks-n`, name),
          listed: await admin.get(`${prefix}:{shard}:checks:${name}`),
        });
      }
      return out;
    };
    const leftovers = async () => (await keysOf(shardUrls(1)[0]!, prefix)).filter((k) => k.includes(":checks"));
    try {
      const q = await createQueue(store);
      const ids = await insert(
        store,
        q,
        Array.from({ length: 5 }, () => ({})),
      );
      const epoch = await lease(store, q);
      const token = "one-hand-out";
      const start = async (jobIds: string[], now = T0) => {
        await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: jobIds.length, now });
        const plans = jobIds.map((id) => ({ id, claimToken: token, claimExpiresAt: now + 1000, retryDelayMs: 0 }));
        expect(await store.jobStartMany({ queue: q, partition: 0, epoch, plans, now })).toEqual(jobIds);
      };
      await start(ids);
      expect(await checks()).toEqual([
        { name: `${token}@${T0 + 1000}`, due: T0 + 1000, count: "5", listed: `${ids.join(" ")} ` },
      ]);
      // ACKs and failures only count down.
      await store.jobCompleteMany({
        items: ids.slice(0, 2).map((id) => ({ id, claimToken: token, customStatus: "" })),
        now: T0,
      });
      await store.jobFailMany({
        items: [{ id: ids[2]!, claimToken: token, customStatus: "", noRetry: true }],
        now: T0,
      });
      expect((await checks()).map((c) => c.count)).toEqual(["2"]);
      // Not due yet: nothing expires, and the check says when to look.
      expect(await store.jobClaimExpire({ now: T0 + 999, limit: 10 })).toEqual({
        expired: [],
        nextExpiryAt: T0 + 1000,
      });
      // Cut by the limit: the check stays due with the job it did not reach.
      const first = await store.jobClaimExpire({ now: T0 + 1000, limit: 1 });
      expect(first.expired.map((j) => j.id)).toEqual([ids[3]]);
      expect(first.nextExpiryAt).toBe(T0 + 1000);
      expect(await checks()).toEqual([
        { name: `${token}@${T0 + 1000}`, due: T0 + 1000, count: "1", listed: `${ids[4]} ` },
      ]);
      const second = await store.jobClaimExpire({ now: T0 + 1000, limit: 10 });
      expect(second.expired.map((j) => j.id)).toEqual([ids[4]]);
      expect(second.nextExpiryAt).toBeUndefined();
      expect(await leftovers()).toEqual([]);
      // The expired jobs are pending again (attempts left): a hand-out all ACKed leaves nothing behind.
      await start([ids[3]!, ids[4]!], T0 + 1000);
      expect((await checks()).map((c) => c.count)).toEqual(["2"]);
      await store.jobCompleteMany({
        items: [ids[3]!, ids[4]!].map((id) => ({ id, claimToken: token, customStatus: "" })),
        now: T0 + 1000,
      });
      expect(await leftovers()).toEqual([]);
    } finally {
      admin.disconnect();
    }
  });

  it("retention GC deletes the job hash and every index entry", async () => {
    const store = await openTestStore();
    const q = await createQueue(store);
    await insert(store, q, [{ idempotencyKey: "once" }, {}]);
    const jobs = await handOut(store, q);
    await store.jobCompleteMany({
      items: jobs.map((j) => ({ id: j.id, claimToken: j.claimToken, customStatus: "" })),
      now: T0,
    });
    expect(await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 1, failedBefore: 0, limit: 10 })).toBe(2);
    const left = (await keysOf(shardUrls(1)[0]!, prefixOf(store))).filter((k) => k.includes(`{q:${q}:`));
    expect(left.sort()).toEqual([
      `${prefixOf(store)}:{q:${q}:0}:lease`,
      `${prefixOf(store)}:{q:${q}:0}:n`,
      `${prefixOf(store)}:{q:${q}:0}:q`,
    ]);
  });

  it("records each claim as one buffer batch; a job released and claimed again is listed twice but seen once, and nothing outlives the batches", async () => {
    const store = await openTestStore();
    const prefix = prefixOf(store);
    const q = await createQueue(store);
    const bufferKeys = async () =>
      (await keysOf(shardUrls(1)[0]!, prefix)).filter((k) => k.includes(`{q:${q}:0}:buf`)).sort();
    const [j1, j2, j3] = await insert(store, q, [{}, {}, {}]);
    const e1 = await lease(store, q);
    const claim = async (limit: number) =>
      (await store.jobClaimMany({ queue: q, partition: 0, epoch: e1, limit, now: T0 })).map((j) => j.id);
    expect(await claim(2)).toEqual([j1, j2]);
    expect(await bufferKeys()).toEqual([
      `${prefix}:{q:${q}:0}:buf`,
      `${prefix}:{q:${q}:0}:buf-n`,
      `${prefix}:{q:${q}:0}:buf:${e1}.1`,
    ]);
    expect(await store.jobReleaseBuffered({ queue: q, partition: 0, epoch: e1, ids: [j1!] })).toBe(1);
    expect(await claim(2)).toEqual([j1, j3]); // batch 2 lists j1 too; batch 1 still holds j2
    expect((await store.jobPeekMany({ queue: q, limit: 10, now: T0 })).map((j) => j.id).sort()).toEqual(
      [j1, j2, j3].sort(),
    );
    expect((await store.queueStats({ name: q, now: T0 })).pending).toBe(3);
    // A new owner releases every batch of the older epoch; nothing of them is left.
    const e2 = (await store.leaseAcquire({
      queue: q,
      partition: 0,
      owner: "broker-b",
      ttlMs: 60_000,
      now: T0 + 60_001,
    }))!.epoch;
    expect(await store.jobReleaseBuffered({ queue: q, partition: 0, belowEpoch: e2 })).toBe(3);
    expect(await bufferKeys()).toEqual([]);
    // Claimed and all started: the batch goes with its last job.
    const claimed = await store.jobClaimMany({ queue: q, partition: 0, epoch: e2, limit: 10, now: T0 + 60_001 });
    const plans = claimed.map((j) => ({ id: j.id, claimToken: "t", claimExpiresAt: T0 + 120_000, retryDelayMs: 0 }));
    expect(await store.jobStartMany({ queue: q, partition: 0, epoch: e2, plans, now: T0 + 60_001 })).toHaveLength(3);
    expect(await bufferKeys()).toEqual([]);
  });

  it("lists succeeded jobs for retention by ACK, oldest first, skipping (and not counting) one deleted before", async () => {
    const store = await openTestStore();
    const admin = new Redis(shardUrls(1)[0]!);
    try {
      const q = await createQueue(store);
      const [j1, j2, j3, j4] = await insert(store, q, [{}, { priority: 2 }, {}, {}]);
      const running = await handOut(store, q);
      const ack = (ids: string[], now: number) =>
        store.jobCompleteMany({
          items: ids.map((id) => ({ id, claimToken: running.find((j) => j.id === id)!.claimToken, customStatus: "" })),
          now,
        });
      await ack([j1!, j2!], T0);
      await ack([j3!], T0 + 10);
      await ack([j4!], T0 + 20);
      const list = () => admin.lrange(`${prefixOf(store)}:{q:${q}:0}:done:s`, 0, -1);
      expect(await list()).toEqual([`${T0} ${j1} ${j2}`, `${T0 + 10} ${j3}`, `${T0 + 20} ${j4}`]);
      expect(
        await store.jobDeleteMany({ queue: q, filter: { state: "succeeded", priority: 2 }, limit: 10, now: T0 + 30 }),
      ).toBe(1);
      // A budget of one: the first entry is cut after j1.
      expect(await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 11, failedBefore: 0, limit: 1 })).toBe(1);
      expect(await list()).toEqual([`${T0} ${j2}`, `${T0 + 10} ${j3}`, `${T0 + 20} ${j4}`]);
      // j2 is gone already: skipped and not counted; j4 is not old enough.
      expect(await store.jobDeleteFinished({ queue: q, succeededBefore: T0 + 11, failedBefore: 0, limit: 10 })).toBe(1);
      expect(await list()).toEqual([`${T0 + 20} ${j4}`]);
      expect((await store.jobGetMany({ ids: [j1!, j2!, j3!, j4!] })).map((j) => j?.state)).toEqual([
        undefined,
        undefined,
        undefined,
        "succeeded",
      ]);
    } finally {
      admin.disconnect();
    }
  });

  it("spreads a queue's partitions over the shards and refuses a removed or reordered shard list", async () => {
    const placed = new Set(Array.from({ length: 6 }, (_, p) => shardOf("emails", p, 3)));
    expect(placed.size).toBe(3);
    const store = await openTestStore(2);
    const prefix = prefixOf(store);
    const [a, b] = shardUrls(2);
    await expect(openRedisStore({ urls: [a!], prefix })).rejects.toThrow(/cannot be removed/);
    await expect(openRedisStore({ urls: [b!, a!], prefix })).rejects.toThrow(/original order/);
  });

  it("scan, count and delete cross chunk boundaries among thousands of run_after ties", async () => {
    const store = await openTestStore();
    const q = await createQueue(store);
    const n = 2500;
    const ids: string[] = [];
    for (let i = 0; i < n; i += 500) {
      const batch = Array.from({ length: 500 }, (_, k) => ({
        body: new TextEncoder().encode(`job ${i + k} ${(i + k) % 2 ? "odd" : "even"}`),
      }));
      ids.push(...(await insert(store, q, batch)));
    }
    const seen: string[] = [];
    let cursor: { runAfter: number; id: string } | undefined;
    for (;;) {
      const page = await store.jobScan({ queue: q, filter: {}, limit: 700, cursor, now: T0 });
      seen.push(...page.map((j) => j.id));
      if (page.length < 700) break;
      cursor = { runAfter: page.at(-1)!.runAfter, id: page.at(-1)!.id };
    }
    expect(seen).toEqual([...ids].sort().reverse());
    expect(await store.jobCount({ queue: q, filter: { bodyRegex: /odd$/ }, now: T0 })).toBe(n / 2);
    expect(await store.jobCount({ queue: q, filter: { priority: 1, future: false }, now: T0 })).toBe(n);
    expect(
      await store.jobDeleteMany({ queue: q, filter: { state: "pending", bodyRegex: /even$/ }, limit: 1100, now: T0 }),
    ).toBe(1100);
    expect(
      await store.jobDeleteMany({ queue: q, filter: { state: "pending", bodyRegex: /even$/ }, limit: 10_000, now: T0 }),
    ).toBe(150);
    expect(await store.jobCount({ queue: q, filter: {}, now: T0 })).toBe(n / 2);
  });

  it("keeps epochs growing across a queue deleted and created again, so an old owner stays fenced", async () => {
    const store = await openTestStore();
    const q = await createQueue(store);
    const a = (await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 }))!;
    await store.queueDelete({ name: q });
    expect(await store.leaseAcquire({ queue: q, partition: 0, owner: "a", ttlMs: 1000, now: T0 })).toBeUndefined(); // no lease on a deleted queue
    await store.queueCreate({ name: q, config: resolveQueueConfig(), now: T0 });
    const b = (await store.leaseAcquire({ queue: q, partition: 0, owner: "b", ttlMs: 1000, now: T0 + 1 }))!;
    expect(b.epoch).toBeGreaterThan(a.epoch);
    await insert(store, q, [{}]);
    expect(await store.jobClaimMany({ queue: q, partition: 0, epoch: a.epoch, limit: 10, now: T0 + 1 })).toEqual([]);
  });

  it("cuts multi-byte custom statuses as the memory store does", async () => {
    const statuses = ["é".repeat(600), "日本".repeat(300), "x\n".repeat(400), "ok"];
    const results = await Promise.all(
      [new MemoryStore(), await openTestStore()].map(async (store) => {
        const q = await createQueue(store);
        await insert(store, q, [{ customStatus: "ä".repeat(300) }]);
        const [job] = await handOut(store, q);
        for (const status of statuses.slice(0, -1)) {
          await store.jobCheckpointMany({
            items: [
              {
                id: job!.id,
                claimToken: job!.claimToken,
                claimExpiresAt: T0 + 1,
                moveToPending: false,
                runAfter: 0,
                attemptsAllowed: 0,
                customStatus: status,
              },
            ],
            now: T0,
          });
        }
        await store.jobCompleteMany({
          items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: statuses.at(-1)! }],
          now: T0,
        });
        return (await get(store, job!.id))!.customStatus;
      }),
    );
    expect(results[1]).toHaveLength(1000);
    expect(results[1]).toBe(results[0]);
  });

  it("keeps a big body byte for byte through every step, also when the packed attributes change length or outgrow the first read", async () => {
    // A transition reads the first 1024 bytes of a job (lua/include/job_record.lua HEAD_READ).
    // A new custom status changes the attributes' length, so the body behind them must be
    // read whole and written back; a long one pushes them past the first read.
    const store = await openTestStore();
    const q = await createQueue(store);
    const body = new Uint8Array(300_000).map((_, i) => (i * 7919) % 256);
    await insert(store, q, [{ body }]);
    const [job] = await handOut(store, q);
    expect(job!.body).toEqual(body);
    await store.jobCheckpointMany({
      items: [
        {
          id: job!.id,
          claimToken: job!.claimToken,
          claimExpiresAt: T0 + 10,
          moveToPending: false,
          runAfter: 0,
          attemptsAllowed: 0,
          customStatus: "t".repeat(300),
        },
      ],
      now: T0,
    });
    expect((await get(store, job!.id))!.body).toEqual(body);
    await store.jobCheckpointMany({
      items: [
        {
          id: job!.id,
          claimToken: job!.claimToken,
          claimExpiresAt: T0 + 10,
          moveToPending: false,
          runAfter: 0,
          attemptsAllowed: 0,
          customStatus: "s".repeat(900),
        },
      ],
      now: T0,
    });
    const [done] = await store.jobCompleteMany({
      items: [{ id: job!.id, claimToken: job!.claimToken, customStatus: "done" }],
      now: T0 + 1,
    });
    expect(done!.outcome).toBe("acknowledged");
    const stored = (await get(store, job!.id))!;
    expect(stored).toMatchObject({ state: "succeeded", claimExpiresAt: 0, finishedAt: T0 + 1 });
    expect(stored.customStatus.endsWith("s\ndone")).toBe(true);
    expect(stored.customStatus).toHaveLength(1000);
    expect(stored.body).toEqual(body);
  });

  it("refuses to open a prefix whose queues were written in an earlier job layout, and records the layout of a new one", async () => {
    const store = await openTestStore();
    const prefix = prefixOf(store);
    const admin = new Redis(shardUrls(1)[0]!);
    try {
      expect(await admin.get(`${prefix}:{meta}:layout`)).toBe("4");
      // A deployment of an earlier build: queues, and no layout recorded.
      const old = `${prefix}old`;
      await admin.hset(`${old}:{meta}:queues`, "q", JSON.stringify(resolveQueueConfig({})));
      await expect(openRedisStore({ urls: shardUrls(1), prefix: old })).rejects.toThrow(
        /layout 1.*this build reads layout 4/,
      );
      // One of a build before the traceparent joined the workflow context (layout 3).
      await admin.set(`${old}:{meta}:layout`, "3");
      await expect(openRedisStore({ urls: shardUrls(1), prefix: old })).rejects.toThrow(
        /layout 3.*this build reads layout 4/,
      );
      await admin.del(`${old}:{meta}:queues`, `${old}:{meta}:layout`);
    } finally {
      admin.disconnect();
    }
  });

  it("refuses a claim token longer than its 64-byte slot before writing anything", async () => {
    const store = await openTestStore();
    const q = await createQueue(store);
    const [id] = await insert(store, q, [{}]);
    const epoch = await lease(store, q);
    await store.jobClaimMany({ queue: q, partition: 0, epoch, limit: 10, now: T0 });
    const plans = [{ id: id!, claimToken: "t".repeat(65), claimExpiresAt: T0 + 1000, retryDelayMs: 0 }];
    await expect(store.jobStartMany({ queue: q, partition: 0, epoch, plans, now: T0 })).rejects.toThrow(
      /claim token longer than 64 bytes/,
    );
    expect(await get(store, id!)).toMatchObject({ state: "buffered", bufferEpoch: epoch, attempt: 0 });
  });
});
