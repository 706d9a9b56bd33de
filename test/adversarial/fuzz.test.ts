/**
 * Fuzz over every method the server serves: seeded random requests (garbage bytes and
 * JSON, random messages from each input schema, damaged encodings, wrong framing and
 * headers) through Connect, Connect streaming, gRPC and gRPC-Web. Whatever a client sends
 * is answered, never with `internal` or `unknown` (a client's mistake is its own:
 * invalid_argument and the like), nothing is logged as an internal error, and the server
 * still answers afterwards. Bounded: a fixed number of cases per store, a few seconds.
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
import { type Answer, type Call, call } from "./fuzz-wire.js";
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
          call(session, c).catch(
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
            call: `#${i + j} ${c.protocol} ${c.binary ? "binary" : "json"} ${c.path} ${JSON.stringify(c.headers)} ${Buffer.from(c.body).toString("hex").slice(0, 80)}`,
            answer,
          });
      });
    }
    session.close();
    expect(wrong).toEqual([]);
    expect(t.errors).toEqual([]);
    // The fuzz may well have deleted the queue: a full round trip on a new one.
    expect((await t.rpc("QueueService/CreateQueue", { name: "after" })).status).toBe(200);
    expect((await t.rpc("JobService/Enqueue", { jobs: [{ queue: "after", body: "aGk=" }] })).status).toBe(200);
    const { body } = await t.rpc("WorkerService/Dequeue", { queue: "after" });
    expect((body.jobs as Array<{ body: string }>)[0]!.body).toBe("aGk=");
  }, 30_000);
});
