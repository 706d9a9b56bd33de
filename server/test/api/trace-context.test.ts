/**
 * The W3C traceparent of an enqueue (docs/tracing.md) through the public API: validated,
 * stored, returned by lookups and handed to workers, also through a forwarded Dequeue's
 * conversion (wire/dequeued-job.ts).
 */
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { dequeuedFromProto } from "../../src/wire/dequeued-job.js";
import { refusal } from "./refusal.js";

const TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

let server: RunningServer;
let jobs: ReturnType<typeof createClient<typeof JobService>>;
let worker: ReturnType<typeof createClient<typeof WorkerService>>;

beforeAll(async () => {
  server = await startServer({ store: new MemoryStore(), port: 0 });
  const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
  jobs = createClient(JobService, transport);
  worker = createClient(WorkerService, transport);
  await createClient(QueueService, transport).createQueue({ name: "traced" });
});
afterAll(() => server.stop());

describe("traceparent", () => {
  it("is stored with the job, returned by GetJobs and handed to the worker; a job without one has none", async () => {
    const { jobIds } = await jobs.enqueue({
      jobs: [{ queue: "traced", traceparent: TRACEPARENT }, { queue: "traced" }],
    });
    const { jobs: found } = await jobs.getJobs({ jobIds });
    expect(found.map((j) => j.traceparent)).toEqual([TRACEPARENT, ""]);
    const { jobs: handed } = await worker.dequeue({ queue: "traced", limit: 2 });
    expect(handed.map((j) => [j.jobId, j.traceparent])).toEqual([
      [jobIds[0], TRACEPARENT],
      [jobIds[1], ""],
    ]);
    // A node that forwarded the Dequeue reads the job back with it.
    expect(handed.map((j) => dequeuedFromProto(j).traceparent)).toEqual([TRACEPARENT, undefined]);
  });

  it.each([
    ["a future version", `01${TRACEPARENT.slice(2)}`],
    ["upper-case hex", TRACEPARENT.toUpperCase()],
    ["a short trace id", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"],
    ["a trailing field", `${TRACEPARENT}-00`],
    ["a zero trace id", `00-${"0".repeat(32)}-00f067aa0ba902b7-01`],
    ["a zero parent id", `00-4bf92f3577b34da6a3ce929d0e0e4736-${"0".repeat(16)}-01`],
    ["no dashes", TRACEPARENT.replaceAll("-", "_")],
  ])("refuses %s, naming the job's field and writing none of the batch", async (_, bad) => {
    const before = (await jobs.scanJobs({ queue: "traced", limit: 100 })).jobs.length;
    expect(
      await refusal(jobs.enqueue({ jobs: [{ queue: "traced" }, { queue: "traced", traceparent: bad }] })),
    ).toMatchObject({
      code: Code.InvalidArgument,
      field: "jobs[1].traceparent",
      message: expect.stringMatching(/traceparent/),
    });
    expect((await jobs.scanJobs({ queue: "traced", limit: 100 })).jobs.length).toBe(before);
  });
});
