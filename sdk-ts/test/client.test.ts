/**
 * createRunlaterClient over every protocol the server speaks, and the client-side
 * conveniences (body encoding, enqueue options, createQueue, errorReason).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../server/src/server.js";
import { createRunlaterClient, type RunlaterClient, type RunlaterClientOptions } from "../src/client.js";
import { errorReason } from "../src/errors.js";
import { ErrorReason } from "../src/gen/runlater/v1/errors_pb.js";
import { JobState } from "../src/gen/runlater/v1/job_pb.js";
import { Outcome } from "../src/gen/runlater/v1/worker_service_pb.js";
import { startTestServer, uniqueQueue } from "./helpers.js";

let server: RunningServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const protocols: Array<[string, RunlaterClientOptions]> = [
  ["connect JSON over HTTP/1.1", { protocol: "connect", binary: false, httpVersion: "1.1" }],
  ["connect binary over HTTP/1.1", { protocol: "connect", httpVersion: "1.1" }],
  ["connect binary over h2c (the default on http://)", {}],
  ["gRPC over h2c", { protocol: "grpc" }],
  ["gRPC-Web over HTTP/1.1", { protocol: "grpc-web" }],
];

describe.each(protocols)("%s", (_name, options) => {
  let client: RunlaterClient;
  let seenContentTypes: string[];
  beforeAll(() => {
    seenContentTypes = [];
    client = createRunlaterClient(server.url, {
      ...options,
      // Prove the protocol really is the one asked for, not a default.
      interceptors: [
        (next) => async (req) => {
          seenContentTypes.push(req.header.get("content-type") ?? "");
          return next(req);
        },
      ],
    });
  });
  afterAll(() => client.close());

  it("creates a queue, enqueues, dequeues, acks and looks the job up", async () => {
    const queue = uniqueQueue("proto");
    const created = await client.createQueue(queue, { priorities: 5, claimTimeoutMs: 60_000 });
    expect(created.created).toBe(true);
    expect(created.queue?.config?.priorities).toBe(5);
    expect((await client.createQueue(queue)).created).toBe(false);

    const id = await client.enqueue(
      queue,
      { hello: "world" },
      { priority: 3, attemptsAllowed: 2, customStatus: "new" },
    );
    const { jobs } = await client.worker.dequeue({ queue, limit: 10 });
    expect(jobs).toHaveLength(1);
    const job = jobs[0]!;
    expect(job).toMatchObject({ jobId: id, priority: 3, attempt: 1, attemptsAllowed: 2, customStatus: "new" });
    expect(JSON.parse(new TextDecoder().decode(job.body))).toEqual({ hello: "world" });

    const ack = await client.worker.ack({
      queue,
      succeeded: [{ jobId: id, claimToken: job.claimToken, customStatus: "ok" }],
    });
    expect(ack.results.map((r) => r.outcome)).toEqual([Outcome.ACKNOWLEDGED]);
    const found = (await client.jobs.getJobs({ jobIds: [id] })).jobs[0];
    expect(found).toMatchObject({ state: JobState.SUCCEEDED, customStatus: "new\nok" });

    const expected = {
      "connect JSON over HTTP/1.1": "application/json",
      "connect binary over HTTP/1.1": "application/proto",
      "connect binary over h2c (the default on http://)": "application/proto",
      "gRPC over h2c": "application/grpc",
      "gRPC-Web over HTTP/1.1": "application/grpc-web",
    }[_name];
    expect(seenContentTypes.length).toBeGreaterThan(0);
    for (const ct of seenContentTypes) expect(ct.startsWith(expected!)).toBe(true);
  });

  it("reports the ErrorInfo reason of a failed call", async () => {
    const err = await client.enqueue("no_such_queue_anywhere", "x").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
    expect(errorReason(err)).toBe(ErrorReason.QUEUE_NOT_FOUND);
  });
});

describe("conveniences", () => {
  let client: RunlaterClient;
  beforeAll(() => {
    client = createRunlaterClient(server.url);
  });

  it("encodes bytes as they are, strings as UTF-8 and other values as JSON", async () => {
    const queue = uniqueQueue("bodies");
    await client.createQueue(queue);
    const bytes = new Uint8Array([0, 255, 7]);
    const ids = await client.enqueueMany([
      { queue, body: bytes },
      { queue, body: "héllo" },
      { queue, body: [1, { a: null }] },
      { queue, body: 42 },
    ]);
    expect(ids).toHaveLength(4);
    const { jobs } = await client.jobs.getJobs({ jobIds: ids, includeBody: true });
    expect(Array.from(jobs[0]!.body)).toEqual([0, 255, 7]);
    expect(new TextDecoder().decode(jobs[1]!.body)).toBe("héllo");
    expect(new TextDecoder().decode(jobs[2]!.body)).toBe('[1,{"a":null}]');
    expect(new TextDecoder().decode(jobs[3]!.body)).toBe("42");
  });

  it("passes runAfter and idempotencyKey through", async () => {
    const queue = uniqueQueue("opts");
    await client.createQueue(queue);
    const later = new Date(Date.now() + 3_600_000);
    const first = await client.enqueue(queue, "a", { runAfter: later, idempotencyKey: "k1" });
    const again = await client.enqueue(queue, "b", { idempotencyKey: "k1" });
    expect(again).toBe(first);
    const job = (await client.jobs.getJobs({ jobIds: [first] })).jobs[0]!;
    expect(timestampMs(job.runAfter!)).toBe(later.getTime());
    expect((await client.worker.dequeue({ queue, limit: 10 })).jobs).toHaveLength(0);
  });

  it("passes orderingKey through, and lookups show it", async () => {
    const queue = uniqueQueue("okey");
    await client.createQueue(queue);
    const one = await client.enqueue(queue, "a", { orderingKey: "customer-7" });
    const [two, three] = await client.enqueueMany([
      { queue, body: "b", orderingKey: "customer-8" },
      { queue, body: "c" },
    ]);
    const { jobs } = await client.jobs.getJobs({ jobIds: [one, two!, three!] });
    expect(jobs.map((j) => j.orderingKey)).toEqual(["customer-7", "customer-8", ""]);
    const scanned = (await client.jobs.scanJobs({ queue })).jobs.map((j) => [j.jobId, j.orderingKey] as const);
    expect(new Map(scanned)).toEqual(
      new Map([
        [one, "customer-7"],
        [two, "customer-8"],
        [three, ""],
      ]),
    );
  });

  it("refuses what it cannot send", async () => {
    expect(() => createRunlaterClient(server.url, { protocol: "grpc", httpVersion: "1.1" })).toThrow(/HTTP\/2/);
    expect(() => createRunlaterClient(server.url, { protocol: "grpc", binary: false })).toThrow(/JSON/);
    await expect(client.enqueue("q", undefined as unknown as string)).rejects.toThrow(/cannot encode/);
  });

  it("speaks h2c by default over http://; through a proxy that speaks only HTTP/1.1 it needs httpVersion 1.1, and says so", async () => {
    // The proxy forwards each HTTP/1.1 request to the server over HTTP/1.1.
    const target = new URL(server.url);
    const proxy = http.createServer((req, res) => {
      const upstream = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      expect(createRunlaterClient(server.url).streams).toBe(true);
      const h2 = createRunlaterClient(proxyUrl);
      const err = await h2.queues.listQueues({}).catch((e: unknown) => e);
      // close() right after the failure: the session's late error must not crash the process.
      h2.close();
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).message).toMatch(
        /speaks only HTTP\/1\.1, create the client with httpVersion: "1\.1"/,
      );
      const http1 = createRunlaterClient(proxyUrl, { httpVersion: "1.1" });
      expect(http1.streams).toBe(false);
      await expect(http1.queues.listQueues({})).resolves.toBeDefined();
    } finally {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it("maps queue options to the QueueConfig durations", async () => {
    const queue = uniqueQueue("cfg");
    const { queue: q } = await client.createQueue(queue, {
      claimTimeoutMs: 1_500,
      retryPolicy: { initialDelayMs: 250, linearSteps: 2, maxDelayMs: 10_000 },
      defaultAttemptsAllowed: 4,
    });
    expect(q?.config?.claimTimeout).toMatchObject({ seconds: 1n, nanos: 500_000_000 });
    expect(q?.config?.retryPolicy).toMatchObject({
      initialDelay: { seconds: 0n, nanos: 250_000_000 },
      linearSteps: 2,
      maxDelay: { seconds: 10n },
    });
    expect(q?.config?.defaultAttemptsAllowed).toBe(4);
  });
});

describe("ordering keys", () => {
  let client: RunlaterClient;
  beforeAll(() => {
    client = createRunlaterClient(server.url);
  });

  const dequeueAll = async (queue: string) => (await client.worker.dequeue({ queue, limit: 10 })).jobs;
  const succeed = (queue: string, job: { jobId: string; claimToken: string }) =>
    client.worker.ack({ queue, succeeded: [{ jobId: job.jobId, claimToken: job.claimToken }] });

  it("hands out the next job of a key only after the one before it is acked", async () => {
    const queue = uniqueQueue("okey_same");
    await client.createQueue(queue);
    const [first, second] = await client.enqueueMany([
      { queue, body: "1", orderingKey: "k" },
      { queue, body: "2", orderingKey: "k" },
    ]);

    const got = await dequeueAll(queue);
    expect(got.map((j) => j.jobId)).toEqual([first]);
    expect(await dequeueAll(queue)).toHaveLength(0);
    expect((await client.jobs.getJobs({ jobIds: [second!] })).jobs[0]?.state).toBe(JobState.PENDING);

    await succeed(queue, got[0]!);
    const next = await dequeueAll(queue);
    expect(next.map((j) => j.jobId)).toEqual([second]);
  });

  it("hands out jobs with different keys together", async () => {
    const queue = uniqueQueue("okey_diff");
    await client.createQueue(queue);
    const ids = await client.enqueueMany([
      { queue, body: "a1", orderingKey: "a" },
      { queue, body: "b1", orderingKey: "b" },
      { queue, body: "a2", orderingKey: "a" },
      { queue, body: "none" },
    ]);
    const got = await dequeueAll(queue);
    expect(got.map((j) => j.jobId).sort()).toEqual([ids[0], ids[1], ids[3]].sort());
  });

  it("runs a FIFO queue one job at a time in enqueue order, whatever the priorities", async () => {
    const queue = uniqueQueue("fifo");
    await client.createQueue(queue, { fifo: true, priorities: 3 });
    const ids = await client.enqueueMany([
      { queue, body: "1", priority: 3 },
      { queue, body: "2", priority: 1, orderingKey: "ignored" },
      { queue, body: "3", priority: 2 },
    ]);
    expect((await client.jobs.getJobs({ jobIds: ids })).jobs.map((j) => j.orderingKey)).toEqual(["", "", ""]);
    for (const id of ids) {
      const got = await dequeueAll(queue);
      expect(got.map((j) => j.jobId)).toEqual([id]);
      await succeed(queue, got[0]!);
    }
    expect(await dequeueAll(queue)).toHaveLength(0);
  });
});

describe("an API token", () => {
  it("is sent on every call, from the option or else RUNLATER_TOKEN", async () => {
    const { newToken } = await import("../../server/src/domain/tokens.js");
    const { startServer } = await import("../../server/src/server.js");
    const { MemoryStore } = await import("../../server/src/store/memory/memory-store.js");
    const admin = newToken({ name: "a", scopes: ["admin", "read", "enqueue"], queues: [], now: 0, expiresAt: 0 }).token;
    const secured = await startServer({ store: new MemoryStore(), port: 0, auth: { bootstrapToken: admin } });
    try {
      await expect(
        createRunlaterClient(secured.url)
          .queues.listQueues({})
          .then((r) => r.queues),
      ).rejects.toThrow(/token/);
      await expect(
        createRunlaterClient(secured.url, { token: admin })
          .queues.listQueues({})
          .then((r) => r.queues),
      ).resolves.toEqual([]);
      process.env.RUNLATER_TOKEN = admin;
      await expect(
        createRunlaterClient(secured.url)
          .queues.listQueues({})
          .then((r) => r.queues),
      ).resolves.toEqual([]);
    } finally {
      delete process.env.RUNLATER_TOKEN;
      await secured.stop();
    }
  });
});
