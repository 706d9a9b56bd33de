/**
 * Broker failover with real processes: 3 brokers + 1 frontend on loopback, one store.
 * failover.redis.test.ts and failover.mysql.test.ts run these same scenarios, each on a
 * fresh database:
 *
 *   a. every broker SIGKILLed: enqueues through the frontend keep succeeding; a new broker
 *      drains them;
 *   b. one broker SIGKILLed under load: every acknowledged enqueue reaches SUCCEEDED,
 *      nothing stays pending or running, duplicates are counted and bounded by the jobs
 *      in flight, the dead broker's partitions are served again within the lease TTL
 *      (plus a margin);
 *   c. rolling restart: every broker SIGTERMed in turn under load and replaced, workers
 *      behind the frontend: nothing lost, nothing run twice, no worker error;
 *   d. one broker SIGSTOPped past its lease: the others take its partitions over; once
 *      resumed it logs "lease lost" and hands out none of the jobs it had buffered (the
 *      store refuses its fenced writes); everything ends SUCCEEDED.
 *
 * Timing: lease TTL 1500 ms (takeover expected within TTL + TTL/3 = 2 s), claim timeout
 * 2500 ms. Every wait polls against a deadline; a failure prints the last log lines of
 * every process.
 */
import { createRunlaterClient, JobState, type RunlaterClient } from "@runlater/sdk";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { type Cluster, exclusive, runDir, sleep, startCluster, stopAll, until } from "./harness.js";
import { Consumer, count, Producer, statesOf, stopLoad, Tally } from "./load.js";

export const LEASE_TTL_MS = 1500;
export const CLAIM_TIMEOUT_MS = 2500;
/** Queue settings of every scenario: a short claim timeout, and a job whose claim expired runs again 100 ms later (not after the default 5 s). */
const QUEUE = { claimTimeoutMs: CLAIM_TIMEOUT_MS, retryPolicy: { initialDelayMs: 100, maxDelayMs: 100 } };
/** Takeover after a broker dies: the contract says within about TTL + TTL/3. */
const TAKEOVER_EXPECTED_MS = LEASE_TTL_MS + LEASE_TTL_MS / 3;
/** Slack for a 2-core machine shared by 4 server processes, the store and the test. */
const TAKEOVER_MARGIN_MS = 1500;
/** Long enough for a dead broker's leases, then its workers' claims, to expire, and the rest to drain. */
const SETTLE_MS = CLAIM_TIMEOUT_MS + TAKEOVER_EXPECTED_MS + 12_000;

/** Which jobs were never acked, and what workers saw of the first few (for failure messages). */
function missing(ids: string[], tally: Tally): string {
  const left = ids.filter((id) => !tally.acked.has(id));
  const sample = left.slice(0, 8).map((id) => `${id}: ${JSON.stringify(tally.receipts.get(id) ?? [])}`);
  return `${left.length} jobs never acked, e.g.\n  ${sample.join("\n  ")}`;
}

export interface StoreUnderTest {
  url: string;
  dispose(): Promise<void>;
}

export function failoverSuite(storeName: string, openStore: () => Promise<StoreUnderTest>): void {
  describe(`cluster failover on ${storeName} (3 brokers + 1 frontend, real processes)`, () => {
    let store: StoreUnderTest;
    let release: () => void = () => {};

    beforeAll(async () => {
      // One cluster test file at a time on this machine (see exclusive()).
      release = await exclusive("cluster-tests", 240_000);
      store = await openStore();
    }, 250_000);

    afterAll(async () => {
      await stopAll();
      await store?.dispose().catch(() => {});
      release();
    }, 30_000);

    /** Runs `body` with a fresh cluster (3 brokers + 1 frontend) and a client of its frontend; always stops it. */
    async function withCluster(body: (c: Cluster, client: RunlaterClient) => Promise<void>): Promise<void> {
      // RUNLATER_CLUSTER_LOG_LEVEL=debug for the servers' debug lines (default info).
      const c = await startCluster({
        store: store.url,
        brokers: 3,
        frontends: 1,
        leaseTtlMs: LEASE_TTL_MS,
        logLevel: process.env.RUNLATER_CLUSTER_LOG_LEVEL ?? "info",
      });
      onTestFailed(({ task }) => {
        const dir = c.dumpLogs(
          `${runDir}cluster-logs/${storeName}-${task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}-${Date.now()}`,
        );
        console.error(`cluster logs at the failure (${storeName}; full logs in ${dir}):\n${c.context(25)}`);
      });
      const client = createRunlaterClient(c.frontend.url, { timeoutMs: 5_000 });
      try {
        await body(c, client);
      } finally {
        await stopLoad();
        client.close();
        await c.stop();
      }
    }

    it("keeps accepting enqueues while every broker is down; a new broker drains them", async () => {
      const t0 = Date.now();
      await withCluster(async (c, client) => {
        const queue = "down_all";
        await client.createQueue(queue, { partitions: 3, ...QUEUE });
        const tally = new Tally();

        // Warm up: the brokers take leases and work a first batch off.
        const warm = await client.enqueueMany(Array.from({ length: 30 }, (_, i) => ({ queue, body: `warm ${i}` })));
        const warmConsumer = new Consumer({ name: "warm", url: c.frontend.url, queue, tally, batch: 10 }).start();
        await until(
          "the warm-up jobs to be acked",
          15_000,
          () => warm.every((id) => tally.acked.has(id)),
          () => c.context(),
        );
        await warmConsumer.stop();
        const owners = c.owners(queue); // informative: brokers may take partitions only on demand

        await Promise.all(c.brokers.map((b) => b.kill()));
        const down = Date.now();
        const ids: string[] = [];
        for (let i = 0; i < 10; i++)
          ids.push(
            ...(await client.enqueueMany(
              Array.from({ length: 50 }, (_, k) => ({ queue, body: `while down ${i}.${k}` })),
            )),
          );
        const enqueueMs = Date.now() - down;
        expect(new Set(ids).size).toBe(500);
        expect(await count(client, queue, JobState.PENDING)).toBe(500);
        expect(await count(client, queue, JobState.RUNNING)).toBe(0);

        const fresh = await c.addBroker();
        const restarted = Date.now();
        const consumer = new Consumer({ name: "after", url: c.frontend.url, queue, tally, batch: 50 }).start();
        await until(
          "every job enqueued while the brokers were down to be acked",
          SETTLE_MS,
          () => ids.every((id) => tally.acked.has(id)),
          () => `${missing(ids, tally)}; consumer errors ${consumer.errors} (${consumer.lastError})\n${c.context()}`,
        );
        const drainedMs = Date.now() - restarted;
        // Brokers take partitions on demand: the consumer's long polls are that demand while a
        // partition comes back to the new broker (the dead ones leave the registry only when
        // their entries expire, which may be after the drain). Its log lines arrive
        // asynchronously, and a broker starved of CPU may lose and retake a lease.
        await until(
          "the new broker to own every partition",
          5_000,
          () => c.owned(fresh, queue).size === 3,
          () => c.context(),
        );
        await consumer.stop();

        const states = await statesOf(client, [...warm, ...ids]);
        expect([...states.values()].filter((s) => s !== JobState.SUCCEEDED)).toEqual([]);
        expect(await count(client, queue, JobState.PENDING)).toBe(0);
        expect(await count(client, queue, JobState.RUNNING)).toBe(0);
        expect(tally.duplicates()).toEqual([]); // nothing was in flight when the brokers died
        console.log(
          `[${storeName}] all brokers down: 500 enqueues in ${enqueueMs} ms through the frontend (owners before: ${JSON.stringify([...owners])}); ` +
            `the new broker drained them in ${drainedMs} ms; test ${Date.now() - t0} ms`,
        );
      });
    }, 60_000);

    it("loses no acknowledged job when a broker is SIGKILLed under load; duplicates bounded", async () => {
      const t0 = Date.now();
      await withCluster(async (c, client) => {
        const queue = "kill_load";
        const partitions = 6;
        const batch = 20;
        await client.createQueue(queue, { partitions, ...QUEUE });
        const tally = new Tally();
        // Workers on the frontend (Dequeue forwarded to the owners) and on each broker.
        const consumers = [
          ...[1, 2].map(
            (i) => new Consumer({ name: `frontend-w${i}`, url: c.frontend.url, queue, tally, batch, workMs: 5 }),
          ),
          ...c.brokers.map((b) => new Consumer({ name: `${b.name}-w`, url: b.url, queue, tally, batch, workMs: 20 })),
        ].map((w) => w.start());
        const producer = new Producer(c.frontend.url, queue, { batch: 50, pauseMs: 25 }).start();

        const owners = await c.waitForOwners(queue, partitions, 10_000);
        await until(
          "jobs flowing",
          10_000,
          () => tally.acked.size >= 500,
          () => c.context(),
        );
        const { victim, victimPartitions, victimWorker } = pickVictim(c, queue, consumers);
        // Kill it while its own worker holds jobs: their acks are lost, they run again later.
        await until("the victim's worker to hold jobs", 5_000, () => victimWorker.inFlight > 0, undefined, 1).catch(
          () => {},
        );
        const inFlightAtKill = consumers.reduce((n, w) => n + w.inFlight, 0);
        const killedAt = Date.now();
        await victim.kill();
        const enqueuedAtKill = producer.ids.length;

        // Keep producing through the takeover, then stop.
        await until(
          "enqueues after the kill",
          15_000,
          () => producer.ids.length >= enqueuedAtKill + 1500,
          () => c.context(),
        );
        await producer.stop();
        const ids = producer.ids;
        await settle(client, queue, ids, tally, consumers, c);
        const settledMs = Date.now() - killedAt;
        await Promise.all(consumers.map((w) => w.stop()));

        expect(await count(client, queue, JobState.SUCCEEDED)).toBe(ids.length); // no job that was never acknowledged to the producer
        const duplicates = checkDuplicates(tally, consumers.length * batch);

        // Takeover: each partition the victim held is acquired by a live broker, and served again.
        const takeover = victimPartitions.map((p) => {
          const acquired = c
            .acquisitions(queue)
            .filter((l) => l.partition === p && l.node !== victim.name && l.time >= killedAt);
          const acquiredAt = acquired.length ? Math.min(...acquired.map((l) => l.time)) : undefined;
          const servedAt = acquiredAt === undefined ? undefined : tally.firstReceiptAfter(p, acquiredAt);
          return {
            partition: p,
            acquiredMs: acquiredAt === undefined ? undefined : acquiredAt - killedAt,
            servedMs: servedAt === undefined ? undefined : servedAt - killedAt,
          };
        });
        for (const t of takeover) expect(t.acquiredMs, `partition ${t.partition} never re-acquired`).toBeDefined();
        expect(Math.max(...takeover.map((t) => t.acquiredMs!))).toBeLessThanOrEqual(
          TAKEOVER_EXPECTED_MS + TAKEOVER_MARGIN_MS,
        );

        console.log(
          `[${storeName}] SIGKILL under load: ${victim.name} held partitions ${victimPartitions.join(",")} (owners before: ${JSON.stringify([...owners])}); ` +
            `${ids.length} acknowledged enqueues (${producer.failures} failed calls), all SUCCEEDED ${settledMs} ms after the kill; ` +
            `hand-outs ${tally.received}, duplicates ${duplicates} (jobs held by workers at the kill ${inFlightAtKill}, acks lost ${tally.lostAcks}, stale acks ${tally.staleAcks}); ` +
            `takeover (ms after the kill) ${takeover.map((t) => `p${t.partition}: acquired ${t.acquiredMs}, served ${t.servedMs ?? "-"}`).join("; ")}; test ${Date.now() - t0} ms`,
        );
      });
    }, 60_000);

    it("runs a rolling restart of every broker under load with no job lost and none run twice", async () => {
      const t0 = Date.now();
      await withCluster(async (c, client) => {
        const queue = "rolling";
        const partitions = 6;
        const batch = 20;
        await client.createQueue(queue, { partitions, ...QUEUE });
        const tally = new Tally();
        // Workers behind the frontend, as in production behind a load balancer: restarting a
        // broker must not cost them a single job.
        const consumers = [1, 2, 3].map((i) =>
          new Consumer({ name: `frontend-w${i}`, url: c.frontend.url, queue, tally, batch, workMs: 5 }).start(),
        );
        const producer = new Producer(c.frontend.url, queue, { batch: 50, pauseMs: 25 }).start();
        await c.waitForOwners(queue, partitions, 10_000);
        await until(
          "jobs flowing",
          10_000,
          () => tally.acked.size >= 300,
          () => c.context(),
        );

        // SIGTERM each original broker in turn (graceful: it leaves the registry, returns its
        // buffered jobs, finishes in-flight calls) and start a replacement.
        for (const old of [...c.liveBrokers]) {
          const ackedBefore = tally.acked.size;
          await old.stop();
          await c.addBroker();
          await until(
            "jobs flowing again after a restart",
            15_000,
            () => tally.acked.size >= ackedBefore + 200,
            () => c.context(),
          );
        }
        await producer.stop();
        const ids = producer.ids;
        await settle(client, queue, ids, tally, consumers, c);
        await Promise.all(consumers.map((w) => w.stop()));

        expect(await count(client, queue, JobState.SUCCEEDED)).toBe(ids.length);
        expect(tally.duplicates(), "jobs run twice across graceful restarts").toEqual([]);
        console.log(
          `[${storeName}] rolling restart of 3 brokers under load: ${ids.length} acknowledged enqueues (${producer.failures} failed calls), all SUCCEEDED; ` +
            `hand-outs ${tally.received}, duplicates 0, consumer errors ${consumers.reduce((n, w) => n + w.errors, 0)}; test ${Date.now() - t0} ms`,
        );
      });
    }, 90_000);

    it("fences a broker SIGSTOPped past its lease: it logs lease lost and hands out none of its stale buffer", async () => {
      const t0 = Date.now();
      await withCluster(async (c, client) => {
        const queue = "stop_lease";
        const partitions = 6;
        const batch = 10;
        const total = 4000;
        await client.createQueue(queue, { partitions, ...QUEUE });
        const ids: string[] = [];
        for (let i = 0; i < total; i += 500)
          ids.push(
            ...(await client.enqueueMany(Array.from({ length: 500 }, (_, k) => ({ queue, body: `job ${i + k}` })))),
          );
        const tally = new Tally();
        // Slow workers (50 ms a batch of 10), so the brokers' buffers are still full when one stops.
        const consumers = [
          new Consumer({ name: "frontend-w", url: c.frontend.url, queue, tally, batch, workMs: 50 }),
          ...c.brokers.map((b) => new Consumer({ name: `${b.name}-w`, url: b.url, queue, tally, batch, workMs: 50 })),
        ].map((w) => w.start());

        await c.waitForOwners(queue, partitions, 10_000);
        await until(
          "jobs flowing",
          10_000,
          () => tally.acked.size >= 200,
          () => c.context(),
        );
        const { victim, victimPartitions, victimWorker } = pickVictim(c, queue, consumers);
        await until("the victim's worker to hold jobs", 5_000, () => victimWorker.inFlight > 0, undefined, 1).catch(
          () => {},
        );
        const inFlightAtPause = consumers.reduce((n, w) => n + w.inFlight, 0);
        const pausedAt = Date.now();
        victim.pause();

        // The others take its partitions over and serve them while it is frozen.
        await until(
          "the paused broker's partitions to be taken over and served",
          TAKEOVER_EXPECTED_MS + TAKEOVER_MARGIN_MS + 5_000,
          () =>
            victimPartitions.every(
              (p) =>
                c.acquisitions(queue).some((l) => l.partition === p && l.node !== victim.name && l.time >= pausedAt) &&
                tally.firstReceiptAfter(p, pausedAt + LEASE_TTL_MS) !== undefined,
            ),
          () => c.context(),
        );
        const takeover = victimPartitions.map(
          (p) =>
            Math.min(
              ...c
                .acquisitions(queue)
                .filter((l) => l.partition === p && l.node !== victim.name && l.time >= pausedAt)
                .map((l) => l.time),
            ) - pausedAt,
        );
        // Frozen past its lease and a registry refresh whatever the takeover took: its
        // workers' calls time out (2 s), their jobs' claims expire.
        await sleep(pausedAt + TAKEOVER_EXPECTED_MS + 500 - Date.now());
        const pausedMs = Date.now() - pausedAt;
        const resumedAt = Date.now();
        victim.resume();

        // Resumed, it finds a newer epoch on every partition it held.
        for (const p of victimPartitions)
          await victim.waitForLog("lease lost", { queue, partition: p }, { since: pausedAt, timeoutMs: 5_000 });
        const leaseLostMs =
          Math.max(
            ...victimPartitions.map((p) => victim.find("lease lost", { queue, partition: p }, pausedAt)[0]!.time),
          ) - resumedAt;

        await settle(client, queue, ids, tally, consumers, c);
        await Promise.all(consumers.map((w) => w.stop()));
        expect(await count(client, queue, JobState.SUCCEEDED)).toBe(total);
        // Its stale buffer was not served (receivedAfterAck in checkDuplicates would show
        // jobs the new owners had already finished); what may run twice are the jobs held
        // by workers when it froze (their acks hung, their claims expired).
        const duplicates = checkDuplicates(tally, consumers.length * batch);

        console.log(
          `[${storeName}] SIGSTOP past the lease: ${victim.name} held partitions ${victimPartitions.join(",")}; re-acquired by others ${takeover.join(", ")} ms after the pause, ` +
            `resumed after ${pausedMs} ms; "lease lost" on all of them within ${leaseLostMs} ms of SIGCONT; ${total} jobs SUCCEEDED; hand-outs ${tally.received}, duplicates ${duplicates} ` +
            `(jobs held by workers at the pause ${inFlightAtPause}, acks lost ${tally.lostAcks}, stale acks ${tally.staleAcks}); test ${Date.now() - t0} ms`,
        );
      });
    }, 60_000);
  });
}

/** The live broker owning the most partitions of `queue`, and the consumer connected to it. */
function pickVictim(c: Cluster, queue: string, consumers: Consumer[]) {
  const ranked = c.liveBrokers
    .map((b) => ({ b, owned: c.owned(b, queue) }))
    .sort((x, y) => y.owned.size - x.owned.size);
  const victim = ranked[0]!.b;
  const victimPartitions = [...ranked[0]!.owned].map((k) => Number(k.split("/")[1])).sort((a, b) => a - b);
  expect(victimPartitions.length).toBeGreaterThan(0);
  return { victim, victimPartitions, victimWorker: consumers.find((w) => w.name === `${victim.name}-w`)! };
}

/**
 * Waits (bounded) until every id is SUCCEEDED in the store and nothing of the queue is
 * pending or running. The store decides, not the tally: an Ack whose call timed out may
 * still have been applied.
 */
async function settle(
  client: RunlaterClient,
  queue: string,
  ids: string[],
  tally: Tally,
  consumers: Consumer[],
  c: Cluster,
): Promise<void> {
  let last = { succeeded: 0, pending: 0, running: 0 };
  await until(
    `all ${ids.length} jobs SUCCEEDED and none pending or running`,
    SETTLE_MS,
    async () => {
      last = {
        succeeded: await count(client, queue, JobState.SUCCEEDED),
        pending: await count(client, queue, JobState.PENDING),
        running: await count(client, queue, JobState.RUNNING),
      };
      return last.succeeded >= ids.length && last.pending === 0 && last.running === 0;
    },
    () =>
      `store counts ${JSON.stringify(last)}; ${missing(ids, tally)}; consumers: ${consumers.map((w) => `${w.name} errors=${w.errors} (${w.lastError})`).join("; ")}\n${c.context()}`,
    200,
  );
  const states = await statesOf(client, ids);
  const notSucceeded = [...states].filter(([, s]) => s !== JobState.SUCCEEDED);
  expect(notSucceeded, `jobs not SUCCEEDED: ${JSON.stringify(notSucceeded.slice(0, 10))}`).toEqual([]);
}

/**
 * Duplicates (jobs handed to workers more than once): only jobs whose Ack never applied
 * (call failed, or refused as stale) may come back, only after their claim expired, never
 * after a worker's Ack was acknowledged, and no more than `bound` (workers × batch).
 */
function checkDuplicates(tally: Tally, bound: number): number {
  const duplicates = tally.duplicates();
  expect(tally.receivedAfterAck(), "jobs handed out again after an acknowledged Ack").toEqual([]);
  expect(duplicates.length).toBeLessThanOrEqual(bound);
  expect(duplicates.length).toBeLessThanOrEqual(tally.lostAcks + tally.staleAcks);
  const early = tally.redeliveryGaps().filter((g) => g.gapMs < CLAIM_TIMEOUT_MS - 500);
  expect(early, "jobs handed out again before their claim could expire").toEqual([]);
  return duplicates.length;
}
