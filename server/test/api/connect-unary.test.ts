/**
 * The common unary call (Connect, POST, uncompressed) is served by api/connect-unary.ts
 * instead of connect-es. Its answers must be connect-es's, byte for byte: the same calls go
 * to two servers, one with that path and one without (fastUnary: false), in the same
 * order on the same test clock, over HTTP/1.1 and HTTP/2, and their answers are compared.
 */
import { getEventListeners } from "node:events";
import { createServer as createH1Server } from "node:http";
import { createServer as createH2Server, connect as http2Connect, constants as http2Constants } from "node:http2";
import { type AddressInfo, connect as netConnect } from "node:net";
import { create, toBinary } from "@bufbuild/protobuf";
import { EnqueueRequestSchema, JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { CreateQueueRequestSchema, ListQueuesRequestSchema, QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servesHere, type UnaryRoute } from "../../src/api/connect-unary.js";
import { connectHandler } from "../../src/api/node-adapter.js";
import { ReadBudget } from "../../src/api/read-budget.js";
import { ManualClock } from "../../src/domain/clock.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

const START = Date.parse("2026-11-26T12:00:00Z");
const MAX_REQUEST_BYTES = 4096;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface Call {
  path: string;
  body: string | Uint8Array;
  contentType?: string;
  headers?: Record<string, string>;
}

const json = (path: string, body: unknown, headers?: Record<string, string>): Call => ({
  path,
  body: typeof body === "string" ? body : JSON.stringify(body),
  contentType: "application/json",
  headers,
});
const binary = (path: string, body: Uint8Array, headers?: Record<string, string>): Call => ({
  path,
  body,
  contentType: "application/proto",
  headers,
});

const Q = "/runlater.v1.QueueService";
const J = "/runlater.v1.JobService";
const W = "/runlater.v1.WorkerService";

/** In order: each server sees the same calls on the same clock, so their answers are equal. */
const calls: Array<[string, Call]> = [
  ["a queue created (JSON)", json(`${Q}/CreateQueue`, { name: "cu_a" })],
  ["the same queue again", json(`${Q}/CreateQueue`, { name: "cu_a" })],
  [
    "a queue created (binary)",
    binary(`${Q}/CreateQueue`, toBinary(CreateQueueRequestSchema, create(CreateQueueRequestSchema, { name: "cu_b" }))),
  ],
  [
    "charset in the content type",
    { ...json(`${Q}/GetQueue`, { name: "cu_a" }), contentType: "application/json; charset=utf-8" },
  ],
  ["a queue's stats", json(`${Q}/GetQueue`, { name: "cu_b" })],
  [
    "every queue, empty binary body",
    binary(`${Q}/ListQueues`, toBinary(ListQueuesRequestSchema, create(ListQueuesRequestSchema))),
  ],
  ["every queue, empty JSON body", json(`${Q}/ListQueues`, "")],
  ["every queue, JSON {}", json(`${Q}/ListQueues`, {})],
  ["not a protobuf message", binary(`${J}/Enqueue`, new Uint8Array([0xff, 0xff, 0xff]))],
  ["not JSON", json(`${J}/Enqueue`, "{not json")],
  ["a field the message does not have", json(`${J}/Enqueue`, { bogus: 1 })],
  ["raw text in a bytes field", json(`${J}/Enqueue`, { jobs: [{ queue: "cu_a", body: "hello world" }] })],
  ["an unknown queue (ErrorInfo detail)", json(`${J}/Enqueue`, { jobs: [{ queue: "nope", body: "aGk=" }] })],
  [
    "past the request size limit",
    json(`${J}/Enqueue`, { jobs: [{ queue: "cu_a", body: "A".repeat(MAX_REQUEST_BYTES) }] }),
  ],
  ["a timeout header that is not one", json(`${Q}/GetQueue`, { name: "cu_a" }, { "connect-timeout-ms": "soon" })],
  [
    "a long poll cut by its deadline",
    json(`${W}/Dequeue`, { queue: "cu_a", limit: 1, wait: "0.3s" }, { "connect-timeout-ms": "150" }),
  ],
  ["a deadline already past", json(`${Q}/GetQueue`, { name: "cu_a" }, { "connect-timeout-ms": "0" })],
  ["an ACK without a queue", json(`${W}/Ack`, { succeeded: [{ jobId: "x", claimToken: "y" }] })],
  ["a method the service does not have", json(`${Q}/NoSuchMethod`, {})],
];

let fast: RunningServer;
let slow: RunningServer;
beforeAll(async () => {
  const options = { port: 0, maxRequestBytes: MAX_REQUEST_BYTES };
  fast = await startServer({ ...options, store: new MemoryStore(), clock: new ManualClock(START) });
  slow = await startServer({ ...options, store: new MemoryStore(), clock: new ManualClock(START), fastUnary: false });
});
afterAll(async () => {
  await Promise.all([fast.stop(), slow.stop()]);
});

describe.each(["1.1", "2"] as const)("HTTP/%s", (version) => {
  it("answers every call as connect-es does: status, content type, headers and body", async () => {
    const send = version === "2" ? sendH2 : sendH1;
    for (const [name, call] of calls) {
      const [ours, theirs] = [await send(fast.url, call), await send(slow.url, call)];
      expect({ name, ...ours }).toEqual({ name, ...theirs });
    }
  });
});

describe("which calls take this path", () => {
  const route = {
    opt: { requireConnectProtocolHeader: false, compressMinBytes: Number.MAX_SAFE_INTEGER },
  } as UnaryRoute;
  const sdk = { "content-type": "application/proto", "connect-protocol-version": "1", "accept-encoding": "gzip, br" };

  it("an SDK's Connect call and a curl JSON call", () => {
    expect(servesHere(route, sdk, "POST")).toBe(true);
    expect(servesHere(route, { "content-type": "application/json; charset=utf-8" }, "POST")).toBe(true);
    expect(servesHere(route, { ...sdk, "content-encoding": "identity" }, "POST")).toBe(true);
  });

  it("not gRPC, gRPC-Web, GET, a compressed body, a stream, or an answer that may be compressed", () => {
    expect(servesHere(route, { "content-type": "application/grpc" }, "POST")).toBe(false);
    expect(servesHere(route, { "content-type": "application/grpc-web+proto" }, "POST")).toBe(false);
    expect(servesHere(route, { "content-type": "application/connect+proto" }, "POST")).toBe(false);
    expect(servesHere(route, sdk, "GET")).toBe(false);
    expect(servesHere(route, { ...sdk, "content-encoding": "gzip" }, "POST")).toBe(false);
    const compressing = { opt: { ...route.opt, compressMinBytes: 1024 } } as UnaryRoute;
    expect(servesHere(compressing, sdk, "POST")).toBe(false);
    expect(servesHere(compressing, { "content-type": "application/proto" }, "POST")).toBe(true);
    const strict = { opt: { ...route.opt, requireConnectProtocolHeader: true } } as UnaryRoute;
    expect(servesHere(strict, sdk, "POST")).toBe(false);
  });
});

/** The headers both answers carry, less the ones that differ by when they were sent. */
function comparable(headers: Iterable<[string, string | string[] | undefined]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of headers) {
    if (key.startsWith(":") || ["date", "connection", "keep-alive"].includes(key) || value === undefined) continue;
    out[key] = String(value);
  }
  return out;
}

async function sendH1(baseUrl: string, call: Call): Promise<Answer> {
  const res = await fetch(baseUrl + call.path, {
    method: "POST",
    headers: { "content-type": call.contentType ?? "application/json", ...call.headers },
    body: call.body,
  });
  return {
    status: res.status,
    headers: comparable(res.headers.entries()),
    body: Buffer.from(await res.arrayBuffer()).toString("base64"),
  };
}

function sendH2(baseUrl: string, call: Call): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(baseUrl);
    session.on("error", reject);
    const req = session.request({
      ":method": "POST",
      ":path": call.path,
      "content-type": call.contentType ?? "application/json",
      ...call.headers,
    });
    const chunks: Buffer[] = [];
    let status = 0;
    let headers: Record<string, string> = {};
    req.on("response", (h) => {
      status = Number(h[":status"]);
      headers = comparable(Object.entries(h));
    });
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      session.close();
      resolve({ status, headers, body: Buffer.concat(chunks).toString("base64") });
    });
    req.on("error", reject);
    req.end(call.body);
  });
}

describe("a call its client gives up on", () => {
  /** A handler on its own server, its shutdown signal ours: a call in flight listens on it. */
  async function serve() {
    const shutdown = new AbortController();
    const reached: string[] = [];
    const handler = connectHandler({
      log: pino({ level: "silent" }),
      readBudget: new ReadBudget(1024 * 1024),
      shutdownSignal: shutdown.signal,
      routes: (router) =>
        router.service(QueueService, {
          listQueues() {
            reached.push("handler");
            return {};
          },
        }),
    });
    const h2 = createH2Server(handler);
    const h1 = createH1Server(handler);
    for (const s of [h2, h1]) await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    const listening = () => getEventListeners(shutdown.signal, "abort").length;
    const close = () => Promise.all([h2, h1].map((s) => new Promise((resolve) => s.close(resolve))));
    return { h2: h2.address() as AddressInfo, h1: h1.address() as AddressInfo, reached, listening, close };
  }

  it("HTTP/2: ends when the client resets its stream halfway through the body", async () => {
    const server = await serve();
    const session = http2Connect(`http://127.0.0.1:${server.h2.port}`);
    try {
      const req = session.request({
        ":method": "POST",
        ":path": `${Q}/ListQueues`,
        "content-type": "application/proto",
        "content-length": "100",
      });
      req.on("error", () => {});
      req.write(new Uint8Array(10)); // 10 of the 100 bytes promised
      await until(() => server.listening() === 1); // the call is reading
      req.close(http2Constants.NGHTTP2_CANCEL);
      await until(() => server.listening() === 0);
      expect(server.reached).toEqual([]);
    } finally {
      session.close();
      await server.close();
    }
  });

  it("HTTP/1.1: ends when the client's connection drops halfway through the body", async () => {
    const server = await serve();
    const socket = netConnect(server.h1.port, "127.0.0.1");
    try {
      socket.on("error", () => {});
      socket.write(
        `POST ${Q}/ListQueues HTTP/1.1\r\nhost: x\r\ncontent-type: application/proto\r\ncontent-length: 100\r\n\r\n`,
      );
      socket.write(Buffer.alloc(10));
      await until(() => server.listening() === 1);
      socket.destroy();
      await until(() => server.listening() === 0);
      expect(server.reached).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it("a bytes field of a request is a Uint8Array of its own, as connect-es parses it: not a Buffer, nor a view on a pooled one", async () => {
  const bodies: Uint8Array[] = [];
  const handler = connectHandler({
    log: pino({ level: "silent" }),
    routes: (router) =>
      router.service(JobService, {
        enqueue(req) {
          bodies.push(req.jobs[0]!.body);
          return { jobIds: ["x"] };
        },
      }),
  });
  const server = createH2Server(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const request = toBinary(
      EnqueueRequestSchema,
      create(EnqueueRequestSchema, { jobs: [{ queue: "q", body: new Uint8Array([1, 2, 3]) }] }),
    );
    const answer = await sendH2(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      binary(`${J}/Enqueue`, request),
    );
    expect(answer.status).toBe(200);
    expect(Object.getPrototypeOf(bodies[0])).toBe(Uint8Array.prototype);
    expect([...bodies[0]!]).toEqual([1, 2, 3]);
    expect(bodies[0]!.buffer.byteLength).toBe(request.byteLength);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
