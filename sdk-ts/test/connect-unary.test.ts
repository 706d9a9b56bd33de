/**
 * The client's unary calls over HTTP/2 go straight on the session (src/connect-unary.ts)
 * instead of through connect-es's universal client. Every outcome must be connect-es's:
 * the same calls go through both, against the runlater server and against a raw HTTP/2
 * server that misbehaves on request (no answer, a reset stream, an HTTP error, a wrong
 * content type, a compressed or trailered answer), and their results, errors (code,
 * message, details) and response headers and trailers are compared.
 */

import { createServer, type Http2Server, constants as h2 } from "node:http2";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../server/src/domain/clock.js";
import { type RunningServer, startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { createRunlaterClient } from "../src/client.js";
import { withConnectUnary } from "../src/connect-unary.js";
import { JobService } from "../src/gen/runlater/v1/job_service_pb.js";
import { ListQueuesResponseSchema, QueueService } from "../src/gen/runlater/v1/queue_service_pb.js";
import { WorkerService } from "../src/gen/runlater/v1/worker_service_pb.js";
import { ANSWER_MAX_BYTES, openTransport } from "../src/transport.js";

/** Two servers in the same state on the same clock: one for each client. */
let runlater: [RunningServer, RunningServer];
let raw: Http2Server;
let rawUrl: string;
beforeAll(async () => {
  const start = () =>
    startServer({ store: new MemoryStore(), port: 0, clock: new ManualClock(Date.parse("2026-11-26T12:00:00Z")) });
  runlater = [await start(), await start()];
  raw = createServer();
  raw.on("stream", misbehave);
  await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
  rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all(runlater.map((s) => s.stop()));
  await new Promise((resolve) => raw.close(resolve));
});

const listing = toBinary(ListQueuesResponseSchema, create(ListQueuesResponseSchema, { queues: [{ name: "q" }] }));
/** A longer answer that compresses well (for the bound on what an answer expands to). */
const long = toBinary(
  ListQueuesResponseSchema,
  create(ListQueuesResponseSchema, { queues: Array.from({ length: 50 }, () => ({ name: "a_queue_name" })) }),
);

/** The raw server's answer, chosen by the call's x-behave header. */
function misbehave(stream: import("node:http2").ServerHttp2Stream, headers: import("node:http2").IncomingHttpHeaders) {
  stream.on("error", () => {});
  stream.resume();
  const answer = (status: number, head: Record<string, string>, body: Uint8Array | string) => {
    stream.respond({ ":status": status, ...head });
    stream.end(body);
  };
  switch (headers["x-behave"]) {
    case "silent":
      return; // never answers
    case "refuse":
      return stream.close(h2.NGHTTP2_REFUSED_STREAM);
    case "calm":
      return stream.close(h2.NGHTTP2_ENHANCE_YOUR_CALM);
    case "503":
      return answer(503, { "content-type": "text/plain" }, "busy");
    case "json-error":
      return answer(
        429,
        { "content-type": "application/json", "x-one": "1", "trailer-x-two": "2" },
        JSON.stringify({ code: "resource_exhausted", message: "slow down" }),
      );
    case "html":
      return answer(200, { "content-type": "text/html" }, "<html></html>");
    case "gzip":
      return answer(200, { "content-type": "application/proto", "content-encoding": "gzip" }, gzipSync(listing));
    case "long":
      return answer(200, { "content-type": "application/proto" }, long);
    case "long-declared": // with its length
      return answer(200, { "content-type": "application/proto", "content-length": String(long.length) }, long);
    case "long-gzip": // far fewer bytes than it expands to
      return answer(200, { "content-type": "application/proto", "content-encoding": "gzip" }, gzipSync(long));
    case "declares-past-max": // only a head declaring one byte more than the SDK reads
      return stream.respond({
        ":status": 200,
        "content-type": "application/proto",
        "content-length": String(ANSWER_MAX_BYTES + 1),
      });
    case "declares-max": // a head declaring the most the SDK reads, then nothing
      stream.respond({
        ":status": 200,
        "content-type": "application/proto",
        "content-length": String(ANSWER_MAX_BYTES),
      });
      return stream.end();
    case "stream-past-max": // a stream message whose envelope declares one byte more than the SDK reads
      stream.respond({ ":status": 200, "content-type": "application/connect+proto" });
      return stream.write(
        Buffer.from([0, ...new Uint8Array(new Uint32Array([ANSWER_MAX_BYTES + 1]).buffer).reverse()]),
      );
    case "zstd":
      return answer(200, { "content-type": "application/proto", "content-encoding": "zstd" }, listing);
    case "cut": // headers and half an answer, then the stream is closed with NO_ERROR
      stream.respond({ ":status": 200, "content-type": "application/proto" });
      stream.write(listing.subarray(0, 3));
      return setTimeout(() => stream.close(h2.NGHTTP2_NO_ERROR), 20);
    case "garbage":
      return answer(200, { "content-type": "application/proto" }, new Uint8Array([0xff, 0xff, 0xff]));
    default:
      return answer(200, { "content-type": "application/proto", "x-one": "1", "trailer-x-two": "2" }, listing);
  }
}

interface Seen {
  header?: Record<string, string>;
  trailer?: Record<string, string>;
}

function clients(baseUrl: string, lean: boolean, binary = true, readMaxBytes = ANSWER_MAX_BYTES) {
  const seen: Seen = {};
  const capture: Interceptor = (next) => async (req) => {
    const res = await next(req);
    if (!res.stream) {
      seen.header = Object.fromEntries([...res.header].filter(([k]) => k !== "date"));
      seen.trailer = Object.fromEntries(res.trailer);
    }
    return res;
  };
  const sessionManager = new Http2SessionManager(baseUrl);
  const options = { baseUrl, httpVersion: "2" as const, sessionManager, interceptors: [capture], readMaxBytes };
  let transport: Transport = createConnectTransport({ ...options, useBinaryFormat: binary });
  if (lean)
    transport = withConnectUnary(transport, { baseUrl, sessionManager, binary, interceptors: [capture], readMaxBytes });
  return {
    queues: createClient(QueueService, transport),
    jobs: createClient(JobService, transport),
    seen,
    close: () => sessionManager.abort(),
  };
}

type Clients = ReturnType<typeof clients>;

/** What a caller sees of a call: the answer, or the error's code, message, details, metadata. */
async function outcome(call: (c: Clients) => Promise<unknown>, c: Clients): Promise<unknown> {
  c.seen.header = c.seen.trailer = undefined;
  try {
    return { ok: await call(c), ...c.seen };
  } catch (e) {
    if (!(e instanceof ConnectError)) throw e;
    return {
      code: Code[e.code],
      message: e.rawMessage,
      details: e.details.map((d) => ("desc" in d ? d.desc.typeName : d.type)),
      metadata: Object.fromEntries([...e.metadata].filter(([k]) => k !== "date")),
    };
  }
}

const q = "cu_client";
// Each binary setting calls the servers again: the queue exists from the second on.
const onRunlater: Array<[string, (c: Clients) => Promise<unknown>]> = [
  ["a queue created", (c) => c.queues.createQueue({ name: q })],
  ["the same queue again", (c) => c.queues.createQueue({ name: q })],
  ["a queue's stats", (c) => c.queues.getQueue({ name: q })],
  [
    "an unknown queue (ErrorInfo detail)",
    (c) => c.jobs.enqueue({ jobs: [{ queue: "nope", body: new Uint8Array(1) }] }),
  ],
  ["an empty queue name", (c) => c.jobs.enqueue({ jobs: [{ queue: "", body: new Uint8Array(1) }] })],
];
const onRaw: Array<[string, (c: Clients) => Promise<unknown>]> = [
  ["an answer with a header and a trailer", (c) => c.queues.listQueues({})],
  [
    "no answer before the deadline",
    (c) => c.queues.listQueues({}, { headers: { "x-behave": "silent" }, timeoutMs: 50 }),
  ],
  [
    "no answer, the caller aborts",
    (c) => c.queues.listQueues({}, { headers: { "x-behave": "silent" }, signal: AbortSignal.timeout(50) }),
  ],
  ["a refused stream", (c) => c.queues.listQueues({}, { headers: { "x-behave": "refuse" } })],
  ["a stream reset with ENHANCE_YOUR_CALM", (c) => c.queues.listQueues({}, { headers: { "x-behave": "calm" } })],
  ["HTTP 503 in plain text", (c) => c.queues.listQueues({}, { headers: { "x-behave": "503" } })],
  [
    "a Connect error with a header and a trailer",
    (c) => c.queues.listQueues({}, { headers: { "x-behave": "json-error" } }),
  ],
  ["an HTML page", (c) => c.queues.listQueues({}, { headers: { "x-behave": "html" } })],
  ["a gzip answer", (c) => c.queues.listQueues({}, { headers: { "x-behave": "gzip" } })],
  ["an encoding not offered", (c) => c.queues.listQueues({}, { headers: { "x-behave": "zstd" } })],
  ["half an answer, then a NO_ERROR reset", (c) => c.queues.listQueues({}, { headers: { "x-behave": "cut" } })],
  ["not a protobuf message", (c) => c.queues.listQueues({}, { headers: { "x-behave": "garbage" } })],
];

/** Each call through both clients in turn; every outcome must be equal. Closes both. */
async function sameBothWays(calls: Array<[string, (c: Clients) => Promise<unknown>]>, lean: Clients, theirs: Clients) {
  try {
    for (const [name, call] of calls) {
      const [a, b] = [await outcome(call, lean), await outcome(call, theirs)];
      expect({ name, a }).toEqual({ name, a: b });
    }
  } finally {
    lean.close();
    theirs.close();
  }
}

describe.each([true, false])("binary %s", (binary) => {
  it("the runlater server's answers and errors are the same both ways", async () => {
    await sameBothWays(onRunlater, clients(runlater[0].url, true, binary), clients(runlater[1].url, false, binary));
  });
});

it("a misbehaving server's answers, resets and silences end the same both ways", async () => {
  await sameBothWays(onRaw, clients(rawUrl, true), clients(rawUrl, false));
});

it("an answer past readMaxBytes is refused the same both ways, one at the bound is read", async () => {
  const calls: Array<[string, (c: Clients) => Promise<unknown>]> = [
    ["an answer of unknown length", (c) => c.queues.listQueues({}, { headers: { "x-behave": "long" } })],
    ["an answer with its length", (c) => c.queues.listQueues({}, { headers: { "x-behave": "long-declared" } })],
    [
      "a gzip answer (the bound is on what it expands to)",
      (c) => c.queues.listQueues({}, { headers: { "x-behave": "long-gzip" } }),
    ],
  ];
  expect(gzipSync(long).length).toBeLessThan(long.length - 1);
  for (const max of [long.length, long.length - 1]) {
    const [lean, theirs] = [clients(rawUrl, true, true, max), clients(rawUrl, false, true, max)];
    for (const [name, call] of calls) {
      const a = await outcome(call, lean);
      expect({ name, max, a }).toEqual({ name, max, a: await outcome(call, theirs) });
      expect({ name, max, a, refused: (a as { code?: string }).code === "ResourceExhausted" }).toEqual({
        a,
        name,
        max,
        refused: max < long.length,
      });
    }
    lean.close();
    theirs.close();
  }
});

it("the SDK reads answers and stream messages up to 64 MiB: past it resource_exhausted, before any body is read", async () => {
  const runlaterClient = createRunlaterClient(rawUrl);
  const opened = openTransport(rawUrl);
  try {
    const past = runlaterClient.queues.listQueues({}, { headers: { "x-behave": "declares-past-max" } });
    await expect(past).rejects.toMatchObject({
      code: Code.ResourceExhausted,
      rawMessage: `message size ${ANSWER_MAX_BYTES + 1} is larger than configured readMaxBytes ${ANSWER_MAX_BYTES}`,
    });
    // At the bound the size is fine: the answer then fails only for promising bytes it never sends.
    const atMax = await runlaterClient.queues
      .listQueues({}, { headers: { "x-behave": "declares-max" } })
      .catch((e) => e);
    expect(atMax).toBeInstanceOf(ConnectError);
    expect(Code[(atMax as ConnectError).code]).not.toBe("ResourceExhausted");
    const worker = createClient(WorkerService, opened.transport);
    const messages = worker.dequeueStream(
      (async function* () {
        yield { queue: "q", credits: 1 };
      })(),
      { headers: { "x-behave": "stream-past-max" } },
    );
    await expect(messages[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: Code.ResourceExhausted });
  } finally {
    runlaterClient.close();
    opened.close();
  }
});

it("a server that is not there: unavailable both ways", async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
  await new Promise((resolve) => probe.close(resolve));
  const [lean, theirs] = [clients(url, true), clients(url, false)];
  const call = (c: Clients) => c.queues.listQueues({});
  const [a, b] = [await outcome(call, lean), await outcome(call, theirs)];
  expect(a).toMatchObject({ code: "Unavailable" });
  expect(a).toEqual(b);
  lean.close();
  theirs.close();
});

it("a bytes field of an answer is a plain Uint8Array, as connect-es gives it", async () => {
  const [lean, theirs] = [clients(runlater[0].url, true), clients(runlater[1].url, false)];
  try {
    for (const c of [lean, theirs]) {
      await c.queues.createQueue({ name: "cu_bytes" });
      const { jobIds } = await c.jobs.enqueue({ jobs: [{ queue: "cu_bytes", body: new Uint8Array([7, 8, 9]) }] });
      const { jobs } = await c.jobs.getJobs({ jobIds, includeBody: true });
      expect(Object.getPrototypeOf(jobs[0]!.body)).toBe(Uint8Array.prototype);
      expect([...jobs[0]!.body]).toEqual([7, 8, 9]);
    }
  } finally {
    lean.close();
    theirs.close();
  }
});

it("gives every call a signal of its own, so listeners an interceptor adds do not pile up on one", async () => {
  const signals: AbortSignal[] = [];
  const spy: Interceptor = (next) => (req) => {
    signals.push(req.signal);
    return next(req);
  };
  const sessionManager = new Http2SessionManager(runlater[0].url);
  const baseUrl = runlater[0].url;
  const transport = withConnectUnary(createConnectTransport({ baseUrl, httpVersion: "2", sessionManager }), {
    baseUrl,
    sessionManager,
    binary: true,
    interceptors: [spy],
    readMaxBytes: ANSWER_MAX_BYTES,
  });
  try {
    const queues = createClient(QueueService, transport);
    for (let i = 0; i < 3; i++) await queues.listQueues({});
    expect(new Set(signals).size).toBe(3);
  } finally {
    sessionManager.abort();
  }
});

it("leaves none of a call's listeners on its closed stream, whatever the outcome (what a closed stream keeps alive)", async () => {
  const sessionManager = new Http2SessionManager(rawUrl);
  // Each stream the calls open, and the listeners src/connect-unary.ts puts on it (Node's own are not counted).
  const opened: Array<{ stream: import("node:http2").ClientHttp2Stream; ours: Set<unknown> }> = [];
  const request = sessionManager.request.bind(sessionManager);
  sessionManager.request = async (...args: Parameters<typeof request>) => {
    const stream = await request(...args);
    const ours = new Set<unknown>();
    const on = stream.on.bind(stream);
    stream.on = ((...args: Parameters<typeof on>) => {
      if (new Error().stack?.includes("connect-unary.ts")) ours.add(args[1]);
      return on(...args);
    }) as typeof stream.on;
    opened.push({ stream, ours });
    return stream;
  };
  const transport = withConnectUnary(createConnectTransport({ baseUrl: rawUrl, httpVersion: "2", sessionManager }), {
    baseUrl: rawUrl,
    sessionManager,
    binary: true,
    interceptors: [],
    readMaxBytes: ANSWER_MAX_BYTES,
  });
  try {
    const queues = createClient(QueueService, transport);
    await queues.listQueues({});
    for (const behave of ["refuse", "503", "cut", "garbage"])
      await expect(queues.listQueues({}, { headers: { "x-behave": behave } })).rejects.toThrow(ConnectError);
    await expect(
      queues.listQueues({}, { headers: { "x-behave": "silent" }, signal: AbortSignal.timeout(20) }),
    ).rejects.toThrow(ConnectError);
    expect(opened).toHaveLength(6);
    for (const { stream, ours } of opened) {
      expect(ours.size).toBeGreaterThanOrEqual(5); // the call listened (else this test proves nothing)
      if (!stream.closed) await new Promise((resolve) => stream.once("close", resolve));
      await new Promise((resolve) => setImmediate(resolve));
      const left = (event: string) => stream.listeners(event).filter((l) => ours.has(l)).length;
      expect(["response", "data", "end", "close"].map(left)).toEqual([0, 0, 0, 0]);
      // One error listener stays, a function shared by every call: a late error must not crash the process.
      expect(left("error")).toBe(1);
    }
  } finally {
    sessionManager.abort();
  }
});
