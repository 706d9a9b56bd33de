/**
 * A broker hands back the answer to a forwarded Dequeue whose sender says it cancelled the
 * call unread (ClusterService.ReleaseForwarded, docs/cluster.md): through the real
 * handlers, headers and engine, on one in-process server.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { afterEach, expect, it } from "vitest";
import { ClusterService } from "../../src/gen/runlater/cluster/v1/cluster_pb.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { FORWARDED_CALL_HEADER, FORWARDED_HEADER } from "../../src/wire/forwarding.js";

let server: RunningServer | undefined;
afterEach(() => server?.stop());

it("puts the jobs of a forwarded answer back to pending when its call is named as cancelled, and only those", async () => {
  server = await startServer({ store: new MemoryStore(), port: 0 });
  const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
  const queues = createClient(QueueService, transport);
  const jobs = createClient(JobService, transport);
  const worker = createClient(WorkerService, transport);
  const cluster = createClient(ClusterService, transport);
  await queues.createQueue({ name: "q" });
  const { jobIds } = await jobs.enqueue({ jobs: [{ queue: "q" }, { queue: "q" }] });
  const forwarded = (callId: string) =>
    worker.dequeue({ queue: "q", limit: 1 }, { headers: { [FORWARDED_HEADER]: "1", [FORWARDED_CALL_HEADER]: callId } });
  const [lost] = (await forwarded("call-lost")).jobs;
  const [kept] = (await forwarded("call-kept")).jobs;
  expect([lost!.jobId, kept!.jobId].sort()).toEqual([...jobIds].sort());
  await cluster.releaseForwarded({ callIds: ["call-lost", "call-never-made"] });
  const byId = new Map((await jobs.getJobs({ jobIds })).jobs.map((j) => [j.jobId, j]));
  // Both have the default 11 attempts: the released one's hand-out charged nothing.
  expect(byId.get(lost!.jobId)).toMatchObject({ state: JobState.PENDING, attemptsRemaining: 11 });
  expect(byId.get(kept!.jobId)).toMatchObject({ state: JobState.RUNNING, attemptsRemaining: 10 });
});
