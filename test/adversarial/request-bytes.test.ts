/**
 * The server-wide bound on request bytes held at once (--max-request-bytes-total): calls
 * past it wait to be read (their clients are held back by flow control) rather than fail,
 * all of them are served in the end, and the waiting is visible in the metrics and the
 * log. Before, 8 concurrent 60 MB requests took the server from 220 MB to 801 MB RSS.
 * API layer: the memory store stands for all.
 */
import * as http from "node:http";
import { create, toBinary } from "@bufbuild/protobuf";
import { EnqueueRequestSchema } from "@runlater/sdk/gen/job_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serve, type Target } from "./harness.js";

const KiB = 1024;

/** A binary Enqueue of `jobs` bodies of `size` bytes each. */
function enqueueBody(jobs: number, size: number): Uint8Array {
  const body = new Uint8Array(size).fill(7);
  return toBinary(
    EnqueueRequestSchema,
    create(EnqueueRequestSchema, { jobs: Array.from({ length: jobs }, () => ({ queue: "q", body })) }),
  );
}

/**
 * Starts a POST of `body` over its own HTTP/1.1 connection, with a Content-Length or
 * chunked (`declared` false); sends the first `sent` bytes only until `finish()`.
 */
function post(port: number, body: Uint8Array, sent = body.byteLength, declared = true) {
  let status: Promise<number> | undefined;
  const req = http.request({
    port,
    host: "127.0.0.1",
    method: "POST",
    path: "/runlater.v1.JobService/Enqueue",
    headers: {
      "content-type": "application/proto",
      ...(declared ? { "content-length": body.byteLength } : { "transfer-encoding": "chunked" }),
    },
    agent: false,
  });
  status = new Promise((resolve, reject) => {
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
  });
  if (sent === body.byteLength) req.end(body);
  else req.write(body.subarray(0, sent));
  return {
    status,
    finish() {
      req.end(body.subarray(sent));
      return status;
    },
  };
}

async function gauge(t: Target, name: string): Promise<number> {
  const text = await (await fetch(`${t.server.url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

describe("request bytes held at once are bounded", () => {
  let t: Target;
  beforeAll(async () => {
    t = await serve("memory", { maxRequestBytes: 1024 * KiB, maxRequestBytesTotal: 1024 * KiB });
    await t.rpc("QueueService/CreateQueue", { name: "q" });
  });
  afterAll(() => t.stop());

  it.each([
    ["a Content-Length", true],
    ["chunked bodies", false],
  ])("makes a call wait to be read while others hold the bound, then serves it (%s)", async (_, declared) => {
    const body = enqueueBody(3, 250 * KiB); // ~750 KiB
    const first = post(t.server.port, body, 700 * KiB, declared); // the oldest: read, waiting for its last bytes
    await until(async () => (await gauge(t, "runlater_request_bytes_held")) >= 700 * KiB);
    const second = post(t.server.port, body, body.byteLength, declared); // would pass 1 MiB: waits to be read
    await until(async () => (await gauge(t, "runlater_request_reads_waiting")) === 1);
    expect(await gauge(t, "runlater_request_bytes_held")).toBeLessThanOrEqual(1024 * KiB);
    expect(t.logged.map((l) => l.msg)).toContain(
      "calls wait to read their requests: --max-request-bytes-total of request bytes are held",
    );
    expect(await first.finish()).toBe(200);
    expect(await second.status).toBe(200);
    await until(async () => (await gauge(t, "runlater_request_bytes_held")) === 0);
  });

  it("serves every one of many concurrent large requests, a few at a time", async () => {
    const body = enqueueBody(2, 300 * KiB); // ~600 KiB: one fits the bound at a time
    const statuses = await Promise.all(Array.from({ length: 8 }, () => post(t.server.port, body).status));
    expect(statuses).toEqual(Array(8).fill(200));
    const { body: count } = await t.rpc("JobService/CountJobs", { queue: "q", state: "PENDING" });
    expect(count.count).toBe(String(2 * 6 + 16));
  });
});
