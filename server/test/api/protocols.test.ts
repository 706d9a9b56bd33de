/**
 * The server over real HTTP on a free port, through each protocol it serves:
 * Connect JSON (plain fetch, as curl would), Connect binary, gRPC and gRPC-Web.
 */
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema, ErrorReason } from "@runlater/sdk/gen/errors_pb.js";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { Outcome, WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ store: new MemoryStore(), port: 0, maxRequestBytes: 2 * 1024 * 1024 });
});
afterAll(() => server.stop());

const transports: Record<string, () => Transport> = {
  "connect json over HTTP/1.1": () =>
    createConnectTransport({ baseUrl: server.url, httpVersion: "1.1", useBinaryFormat: false }),
  "connect binary over h2c": () =>
    createConnectTransport({ baseUrl: server.url, httpVersion: "2", useBinaryFormat: true }),
  "grpc over h2c": () => createGrpcTransport({ baseUrl: server.url }),
  "grpc-web over HTTP/1.1": () => createGrpcWebTransport({ baseUrl: server.url, httpVersion: "1.1" }),
};

let n = 0;
describe.each(Object.entries(transports))("%s", (_name, makeTransport) => {
  it("runs a job through its whole life: create queue, enqueue, dequeue, ack, look up", async () => {
    const transport = makeTransport();
    const queues = createClient(QueueService, transport);
    const jobs = createClient(JobService, transport);
    const worker = createClient(WorkerService, transport);
    const queue = `proto_${++n}`;
    expect((await queues.createQueue({ name: queue })).created).toBe(true);
    const body = new Uint8Array([0, 255, 1, 128]);
    const { jobIds } = await jobs.enqueue({ jobs: [{ queue, body, priority: 2 }] });
    const { jobs: taken } = await worker.dequeue({ queue, limit: 5 });
    expect(taken).toHaveLength(1);
    expect(taken[0]).toMatchObject({ jobId: jobIds[0], priority: 2, attempt: 1, attemptsAllowed: 11 });
    expect(Array.from(taken[0]!.body)).toEqual(Array.from(body));
    const ack = await worker.ack({
      queue,
      succeeded: [{ jobId: taken[0]!.jobId, claimToken: taken[0]!.claimToken, customStatus: "done" }],
    });
    expect(ack.results[0]!.outcome).toBe(Outcome.ACKNOWLEDGED);
    const found = await jobs.getJobs({ jobIds: [jobIds[0]!, `${queue}.0.zzzzzzzzzz`], includeBody: true });
    expect(found.jobs[0]).toMatchObject({ state: JobState.SUCCEEDED, customStatus: "done" });
    expect(Array.from(found.jobs[0]!.body)).toEqual(Array.from(body));
    expect(found.notFoundJobIds).toEqual([`${queue}.0.zzzzzzzzzz`]);
    const { queue: q } = await queues.getQueue({ name: queue });
    expect(q!.stats!.succeeded).toBe(1n);
  });

  it("returns not_found with an ErrorInfo detail for an unknown queue", async () => {
    const jobs = createClient(JobService, makeTransport());
    const err = await jobs.enqueue({ jobs: [{ queue: "does_not_exist" }] }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect((err as ConnectError).rawMessage).toMatch(/queue "does_not_exist" does not exist; create it/);
    expect((err as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason).toBe(ErrorReason.QUEUE_NOT_FOUND);
  });
});

describe("connect json as curl sees it", () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/runlater.v1.${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });

  it("answers malformed JSON with invalid_argument, never internal", async () => {
    const res = await post("JobService/Enqueue", '{"jobs":[{"queue":');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument" });
  });

  it("answers a wrong field type with invalid_argument", async () => {
    const res = await post("QueueService/CreateQueue", '{"name": 42}');
    expect(await res.json()).toMatchObject({ code: "invalid_argument" });
  });

  it("refuses a request larger than the server's limit with resource_exhausted", async () => {
    const res = await post(
      "JobService/Enqueue",
      JSON.stringify({ jobs: [{ queue: "x", body: Buffer.alloc(3 * 1024 * 1024).toString("base64") }] }),
    );
    expect(await res.json()).toMatchObject({ code: "resource_exhausted" });
  });

  it("serves read-only methods over GET", async () => {
    await post("QueueService/CreateQueue", '{"name":"get_me"}');
    const message = encodeURIComponent(JSON.stringify({ name: "get_me" }));
    const res = await fetch(
      `${server.url}/runlater.v1.QueueService/GetQueue?connect=v1&encoding=json&message=${message}`,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ queue: { name: "get_me" } });
  });

  it("ends a long poll before the caller's deadline, with an empty answer", async () => {
    await post("QueueService/CreateQueue", '{"name":"long_poll"}');
    const started = Date.now();
    const res = await post("WorkerService/Dequeue", '{"queue":"long_poll","wait":"30s"}', {
      "connect-timeout-ms": "400",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({});
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("wakes a long poll as soon as a job arrives", async () => {
    await post("QueueService/CreateQueue", '{"name":"wake_me"}');
    const poll = post("WorkerService/Dequeue", '{"queue":"wake_me","wait":"30s"}');
    await new Promise((r) => setTimeout(r, 100));
    await post("JobService/Enqueue", '{"jobs":[{"queue":"wake_me","body":"aGk="}]}');
    const body = (await (await poll).json()) as { jobs: Array<{ body: string }> };
    expect(body.jobs[0]!.body).toBe("aGk=");
  });
});

describe("graceful shutdown", () => {
  it("ends waiting long polls, refuses nothing in flight, and releases buffered jobs", async () => {
    const store = new MemoryStore();
    const local = await startServer({ store, port: 0 });
    const transport = createConnectTransport({ baseUrl: local.url, httpVersion: "1.1" });
    const queues = createClient(QueueService, transport);
    const jobs = createClient(JobService, transport);
    const worker = createClient(WorkerService, transport);
    await queues.createQueue({ name: "drain" });
    await queues.createQueue({ name: "idle" });
    const { jobIds } = await jobs.enqueue({ jobs: [{ queue: "drain" }, { queue: "drain" }] });
    await worker.dequeue({ queue: "drain", limit: 1 }); // the other job sits in the broker's buffer
    const poll = worker.dequeue({ queue: "idle", wait: { seconds: 30n } });
    await new Promise((r) => setTimeout(r, 50));
    await local.stop();
    expect((await poll).jobs).toEqual([]);
    const states = (await store.jobGetMany({ ids: jobIds })).map((j) => j!.state).sort();
    expect(states).toEqual(["pending", "running"]);
  });
});
