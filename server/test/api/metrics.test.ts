/**
 * Prometheus metrics on GET /metrics (docs/metrics.md): job movements counted per queue as
 * they happen, RPC durations by method and code, the broker's buffers, process metrics;
 * and nothing served with metrics off.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

let server: RunningServer | undefined;
afterEach(() => server?.stop());

async function scrape(url: string): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${url}/metrics`);
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

/** The value of one sample line, e.g. `runlater_jobs_enqueued_total{queue="q"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("metrics", () => {
  it("counts enqueues, hand-outs, acks by result, expired claims and RPCs per queue", async () => {
    const clock = new ManualClock(Date.now());
    server = await startServer({ store: new MemoryStore(), port: 0, clock });
    const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
    const queues = createClient(QueueService, transport);
    const jobs = createClient(JobService, transport);
    const worker = createClient(WorkerService, transport);
    await queues.createQueue({ name: "q", config: { claimTimeout: { seconds: 1n } } });
    await jobs.enqueue({ jobs: Array.from({ length: 5 }, () => ({ queue: "q" })) });
    const [a, b, , d] = (await worker.dequeue({ queue: "q", limit: 4 })).jobs;
    await worker.ack({
      queue: "q",
      succeeded: [a!, { jobId: a!.jobId, claimToken: "not-the-token" }].map((j) => ({
        jobId: j.jobId,
        claimToken: j.claimToken,
      })),
      failed: [{ jobId: b!.jobId, claimToken: b!.claimToken }],
    });
    await queues.getQueue({ name: "nope" }).catch(() => undefined);
    await clock.advance(1000);
    await server.maintenance.sweepClaims(); // c and d ran out
    expect(d).toBeDefined();

    const { status, type, text } = await scrape(server.url);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain/);
    expect(sample(text, 'runlater_jobs_enqueued_total{queue="q"}')).toBe(5);
    expect(sample(text, 'runlater_jobs_handed_out_total{queue="q"}')).toBe(4);
    expect(sample(text, 'runlater_jobs_acked_total{queue="q",result="succeeded"}')).toBe(1);
    expect(sample(text, 'runlater_jobs_acked_total{queue="q",result="stale_claim"}')).toBe(1);
    expect(sample(text, 'runlater_jobs_acked_total{queue="q",result="failed"}')).toBe(1);
    expect(sample(text, 'runlater_claims_expired_total{queue="q"}')).toBe(2);
    expect(sample(text, 'runlater_rpc_duration_seconds_count{method="Enqueue",code="ok"}')).toBe(1);
    expect(sample(text, 'runlater_rpc_duration_seconds_count{method="GetQueue",code="not_found"}')).toBe(1);
    // Present (the jobs in the buffer now depend on refills): a missing series reads undefined and fails.
    expect(sample(text, "runlater_broker_buffered_jobs")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "runlater_broker_buffered_bytes")).toBeGreaterThanOrEqual(0);
    expect(text).toMatch(/^runlater_process_cpu_user_seconds_total /m);
  });

  it("serves no /metrics with metrics off, and the API still works", async () => {
    server = await startServer({ store: new MemoryStore(), port: 0, metrics: false });
    expect((await scrape(server.url)).status).not.toBe(200);
    const queues = createClient(QueueService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    await queues.createQueue({ name: "q" });
  });
});
