/**
 * The SQLite store's promise, with real processes: a server on a SQLite file, producers and
 * workers running, SIGKILLed twice and started again on the same file and port. Every
 * enqueue the server acknowledged reaches SUCCEEDED; a job runs twice only when its
 * worker's claim was cut by a kill, and then not before the claim timeout ran out.
 *
 * Same harness as the cluster tests (test/cluster/harness.ts: real processes, logs kept,
 * parent-watch), and the same lock: one such test at a time on this machine.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRunlaterClient, JobState } from "@runlater/sdk";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { freePort } from "../../server/test/services.js";
import { exclusive, type NodeProcess, runDir, startNode, stopAll, until } from "../cluster/harness.js";
import { Consumer, count, Producer, statesOf, stopLoad, Tally } from "../cluster/load.js";

const JOBS = 20_000;
const CLAIM_TIMEOUT_MS = 2_000;
const CONSUMERS = 3;
const BATCH = 50;
/** Receipts are timed by the workers, a hand-out by the server: allow the answer's trip between them. */
const CLOCK_SLACK_MS = 500;

describe("sqlite store: SIGKILL of the server under load (real processes)", () => {
  let release: () => void = () => {};
  const dir = mkdtempSync(join(tmpdir(), "runlater-kill-"));

  beforeAll(async () => {
    release = await exclusive("cluster-tests", 240_000);
  }, 250_000);

  afterAll(async () => {
    await stopLoad();
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    release();
  }, 30_000);

  it("loses no acknowledged enqueue across two SIGKILLs; duplicates come only from cut claims, after the claim timeout", async () => {
    const t0 = Date.now();
    const store = `sqlite:${join(dir, "runlater.db")}`;
    const port = await freePort();
    const servers: NodeProcess[] = [];
    const start = async () => {
      const node = await startNode({ name: `server-${servers.length + 1}`, store, port, logLevel: "warn" });
      servers.push(node);
      return node;
    };
    onTestFailed(() => console.error(servers.map((s) => s.tail(25)).join("\n")));
    let server = await start();
    const url = server.url;
    const client = createRunlaterClient(url, { timeoutMs: 5_000 });
    const queue = "kill";
    await client.createQueue(queue, {
      claimTimeoutMs: CLAIM_TIMEOUT_MS,
      retryPolicy: { initialDelayMs: 100, maxDelayMs: 100 },
    });
    const tally = new Tally();
    const consumers = Array.from({ length: CONSUMERS }, (_, i) =>
      new Consumer({ name: `w${i}`, url, queue, tally, batch: BATCH, workMs: 5 }).start(),
    );
    const producer = new Producer(url, queue, { batch: 100, pauseMs: 5, max: JOBS }).start();

    const kills: Array<{ at: number; enqueued: number; acked: number; inFlight: number }> = [];
    for (const threshold of [JOBS / 3, (2 * JOBS) / 3]) {
      await until(
        "enqueues before the kill",
        60_000,
        () => producer.ids.length >= threshold,
        () => server.tail(),
      );
      kills.push({
        at: Date.now(),
        enqueued: producer.ids.length,
        acked: tally.acked.size,
        inFlight: consumers.reduce((n, w) => n + w.inFlight, 0),
      });
      await server.kill();
      server = await start();
    }
    await until(
      "every enqueue acknowledged",
      60_000,
      () => producer.ids.length >= JOBS,
      () => server.tail(),
    );
    await producer.stop();
    const ids = producer.ids;
    // A job can succeed without its worker hearing so (the kill cut the Ack's answer): ask the store.
    await until(
      "every acknowledged job to succeed",
      60_000,
      async () => [...(await statesOf(client, ids)).values()].every((s) => s === JobState.SUCCEEDED),
      () => server.tail(),
      500,
    );
    await Promise.all(consumers.map((w) => w.stop()));

    expect(ids).toHaveLength(JOBS);
    const states = await statesOf(client, ids);
    expect([...states.values()].filter((s) => s !== JobState.SUCCEEDED)).toEqual([]);
    expect(await count(client, queue, JobState.PENDING)).toBe(0);
    expect(await count(client, queue, JobState.RUNNING)).toBe(0);
    // An enqueue cut by a kill after its commit is stored but was never acknowledged: it runs too.
    const unacknowledged = (await count(client, queue, JobState.SUCCEEDED)) - ids.length;
    expect(unacknowledged).toBeGreaterThanOrEqual(0);
    expect(unacknowledged).toBeLessThanOrEqual(2 * 100);

    const duplicates = tally.redeliveryGaps();
    expect(duplicates.length).toBeLessThanOrEqual(kills.length * CONSUMERS * BATCH);
    for (const d of duplicates) expect(d.gapMs, d.id).toBeGreaterThanOrEqual(CLAIM_TIMEOUT_MS - CLOCK_SLACK_MS);
    expect(tally.receivedAfterAck()).toEqual([]);
    client.close();
    const gaps = duplicates.map((d) => d.gapMs);
    console.log(
      `[sqlite] ${ids.length} acknowledged enqueues (${producer.failures} failed calls, ${unacknowledged} stored but unacknowledged), all SUCCEEDED; ` +
        `SIGKILL at ${kills.map((k) => `${k.enqueued} enqueued / ${k.acked} acked / ${k.inFlight} held by workers`).join(" and ")}; ` +
        `hand-outs ${tally.received}, duplicates ${duplicates.length} (redelivered ${gaps.length ? `${Math.min(...gaps)}–${Math.max(...gaps)} ms` : "-"} after their first hand-out; claim timeout ${CLAIM_TIMEOUT_MS} ms), ` +
        `acks lost ${tally.lostAcks}, stale acks ${tally.staleAcks}; test ${Date.now() - t0} ms (logs: ${runDir})`,
    );
  }, 200_000);
});
