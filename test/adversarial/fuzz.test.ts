/**
 * Fuzz over every method the server serves: seeded random requests (garbage bytes and
 * JSON, random messages from each input schema, damaged encodings, wrong framing and
 * headers) through Connect, Connect streaming, gRPC and gRPC-Web, over HTTP/2 and
 * HTTP/1.1. Whatever a client sends is answered, never with `internal` or `unknown` (a
 * client's mistake is its own: invalid_argument and the like), nothing is logged as an
 * error, every call gives back the request bytes it held, and the server still answers
 * afterwards. Bounded: a fixed number of cases per store, about a second each.
 */
import * as http2 from "node:http2";
import type { DescMethod } from "@bufbuild/protobuf";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterService } from "../../server/src/gen/runlater/cluster/v1/cluster_pb.js";
import { TestControlService } from "../../server/src/gen/runlater/testing/v1/control_pb.js";
import { type Known, randomCall, seeded } from "./fuzz-cases.js";
import { type Answer, type Call, call, callHttp1 } from "./fuzz-wire.js";
import { serve, storeKinds, type Target } from "./harness.js";

/** RUNLATER_FUZZ_CASES and RUNLATER_FUZZ_SEED run a longer or another fuzz locally. */
const CASES = Number(process.env.RUNLATER_FUZZ_CASES ?? 300);
const PARALLEL = 8;
const SEED = Number(process.env.RUNLATER_FUZZ_SEED ?? 20261126);

const methods: DescMethod[] = [JobService, QueueService, WorkerService, ClusterService, TestControlService].flatMap(
  (s) => s.methods,
);

describe.each(storeKinds)("fuzz over every method (%s)", (kind) => {
  let t: Target;
  const known: Known = { queue: "fz", jobIds: [] };
  beforeAll(async () => {
    t = await serve(kind);
    await t.rpc("QueueService/CreateQueue", { name: "fz" });
    const { body } = await t.rpc("JobService/Enqueue", { jobs: [{ queue: "fz" }, { queue: "fz", body: "aGk=" }] });
    known.jobIds.push(...(body.jobIds as string[]));
  });
  afterAll(() => t?.stop());

  it(`answers ${CASES} random requests without internal errors, and still serves`, async () => {
    const r = seeded(SEED);
    const cases: Call[] = Array.from({ length: CASES }, () => randomCall(r, methods, known));
    const wrong: Array<{ call: string; answer: Answer }> = [];
    let session = http2.connect(t.server.url);
    for (let i = 0; i < cases.length; i += PARALLEL) {
      if (session.closed || session.destroyed) session = http2.connect(t.server.url);
      const batch = cases.slice(i, i + PARALLEL);
      const answers = await Promise.all(
        batch.map((c) =>
          (c.http1 ? callHttp1(t.server.port, c) : call(session, c)).catch(
            (err: Error): Answer => ({ status: 0, code: `transport: ${err.message}`, message: "" }),
          ),
        ),
      );
      answers.forEach((answer, j) => {
        const c = batch[j]!;
        if (
          answer.status === 500 ||
          ["internal", "unknown"].includes(answer.code) ||
          answer.code.startsWith("transport")
        )
          wrong.push({
            call: `#${i + j} ${c.protocol}${c.http1 ? " (HTTP/1.1)" : ""} ${c.binary ? "binary" : "json"} ${c.path} ${JSON.stringify(c.headers)} ${Buffer.from(c.body).toString("hex").slice(0, 80)}`,
            answer,
          });
      });
    }
    session.close();
    expect(wrong).toEqual([]);
    expect(t.errors).toEqual([]);
    // Every call gave back the request bytes it held (a leak would starve later calls).
    expect(await heldWithin(t, 5_000)).toBe(0);
    // The fuzz may well have deleted the queue: a full round trip on a new one.
    expect((await t.rpc("QueueService/CreateQueue", { name: "after" })).status).toBe(200);
    expect((await t.rpc("JobService/Enqueue", { jobs: [{ queue: "after", body: "aGk=" }] })).status).toBe(200);
    const { body } = await t.rpc("WorkerService/Dequeue", { queue: "after" });
    expect((body.jobs as Array<{ body: string }>)[0]!.body).toBe("aGk=");
  }, 30_000);
});

/** runlater_request_bytes_held once it is 0, or after `ms`. */
async function heldWithin(t: Target, ms: number): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const metrics = await (await fetch(`${t.server.url}/metrics`)).text();
    const held = Number(/^runlater_request_bytes_held (\S+)$/m.exec(metrics)?.[1]);
    if (held === 0 || Date.now() > until) return held;
    await new Promise((r) => setTimeout(r, 50));
  }
}
