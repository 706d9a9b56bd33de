/**
 * The connection bounds on a real server (small values so the test is quick): calls that
 * wait longer than the idle timeout (a long-polling Dequeue over HTTP/1.1 and HTTP/2, a
 * quiet DequeueStream) keep working; a connection that sends nothing is closed after the
 * header timeout, logged once and counted in the metrics. The listener's own rules are
 * tested in server/test/http/listener.test.ts.
 */
import * as net from "node:net";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import {
  type DequeueStreamRequestSchema,
  type DequeueStreamResponse,
  WorkerService,
} from "@runlater/sdk/gen/worker_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StreamOutbox } from "../../server/src/api/stream-outbox.js";
import { serve, type Target } from "./harness.js";

describe("connection timeouts on a running server", () => {
  let t: Target;
  beforeAll(async () => {
    t = await serve("memory", { idleTimeoutMs: 200, headerTimeoutMs: 200 });
    await t.rpc("QueueService/CreateQueue", { name: "q" });
  });
  afterAll(() => t.stop());

  it("lets long polls that wait past the idle timeout finish, over HTTP/1.1 and HTTP/2", async () => {
    for (const httpVersion of ["1.1", "2"] as const) {
      const worker = createClient(WorkerService, createConnectTransport({ baseUrl: t.server.url, httpVersion }));
      const started = Date.now();
      const { jobs } = await worker.dequeue({ queue: "q", wait: { seconds: 1n } });
      expect(jobs).toEqual([]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900); // it did wait, on an open connection
    }
  });

  it("keeps a quiet DequeueStream open past the idle timeout and delivers to it", async () => {
    const transport = createGrpcTransport({ baseUrl: t.server.url });
    const requests = new StreamOutbox<MessageInitShape<typeof DequeueStreamRequestSchema>>();
    const responses = createClient(WorkerService, transport).dequeueStream(requests)[Symbol.asyncIterator]();
    requests.push({ queue: "q", credit: 1 });
    await new Promise((r) => setTimeout(r, 600)); // three idle timeouts without a message either way
    const { jobIds } = await createClient(JobService, transport).enqueue({ jobs: [{ queue: "q" }] });
    const got = await responses.next();
    expect(got.done).toBe(false);
    expect((got.value as DequeueStreamResponse).jobs.map((j) => j.jobId)).toEqual(jobIds);
    requests.close();
    await createClient(QueueService, transport).getQueue({ name: "q" });
  });

  it("closes a connection that sends nothing, logs it and counts it", async () => {
    const socket = net.connect(t.server.port, "127.0.0.1");
    await new Promise((resolve) => socket.on("close", resolve));
    const metrics = await (await fetch(`${t.server.url}/metrics`)).text();
    expect(metrics).toMatch(/^runlater_connections_closed_total\{reason="header_timeout"\} [1-9]/m);
    expect(metrics).toMatch(/^runlater_connections_open [1-9]/m); // this scrape's own connection
    expect(t.logged.map((l) => l.msg)).toContain("connection closed: no request head within --header-timeout");
  });
});
