/**
 * A client's malformed request is answered as the client's fault (invalid_argument,
 * saying what was wrong) on every protocol, never as `internal`; values a client may send
 * that no server issues (a non-ASCII job id or claim token) are simply not found / stale
 * on every store; an error message quoting half an emoji still reaches a gRPC client.
 */
import * as http2 from "node:http2";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { ListQueuesRequestSchema } from "@runlater/sdk/gen/queue_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Answer, type Call, call, concat, envelope, type Protocol } from "./fuzz-wire.js";
import { serve, storeKinds, type Target } from "./harness.js";

const garbage = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x07]); // illegal tag

describe("malformed requests are invalid_argument on every protocol", () => {
  let t: Target;
  let session: http2.ClientHttp2Session;
  beforeAll(async () => {
    t = await serve("memory");
    session = http2.connect(t.server.url);
  });
  afterAll(async () => {
    session.close();
    await t.stop();
  });
  const send = (c: Omit<Call, "binary"> & { binary?: boolean }): Promise<Answer> =>
    call(session, { binary: true, ...c });

  it.each<[Protocol, string]>([
    ["connect", "runlater.v1.JobService/Enqueue"],
    ["grpc", "runlater.v1.JobService/Enqueue"],
    ["grpc-web", "runlater.v1.QueueService/ListQueues"],
    ["connect-stream", "runlater.v1.WorkerService/DequeueStream"],
    ["grpc", "runlater.v1.WorkerService/DequeueStream"],
  ])("a body that is not a protobuf message (%s, %s)", async (protocol, path) => {
    const answer = await send({ protocol, path, body: protocol === "connect" ? garbage : envelope(garbage) });
    expect(answer.code).toBe("invalid_argument");
    expect(answer.message).toMatch(
      /^the request is not a runlater\.v1\.\w+ in the protobuf binary format \(illegal tag/,
    );
    if (protocol === "connect") expect(answer.status).toBe(400);
  });

  it("a message flagged compressed in a call that declares no encoding", async () => {
    for (const protocol of ["grpc", "grpc-web"] as const) {
      const answer = await send({
        protocol,
        path: "runlater.v1.QueueService/ListQueues",
        body: envelope(new Uint8Array(0), 1),
      });
      expect(answer).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/flagged compressed/) });
    }
  });

  it("a body that does not decompress with its declared encoding", async () => {
    const answer = await send({
      protocol: "connect",
      path: "runlater.v1.QueueService/ListQueues",
      body: gzipSync("{}").subarray(0, 12),
      headers: { "content-encoding": "gzip" },
    });
    expect(answer).toMatchObject({ status: 400, code: "invalid_argument" });
  });

  it("a gRPC unary call with no message, or with two", async () => {
    const one = envelope(toBinary(ListQueuesRequestSchema, create(ListQueuesRequestSchema)));
    for (const body of [new Uint8Array(0), concat([one, one])]) {
      const answer = await send({ protocol: "grpc", path: "runlater.v1.QueueService/ListQueues", body });
      expect(answer.code).toBe("invalid_argument");
      expect(answer.message).toMatch(/ListQueues takes exactly one runlater\.v1\.ListQueuesRequest/);
    }
  });

  it("an error quoting half of an emoji reaches a gRPC client (it hung before)", async () => {
    const name = `a${"\u{1F600}".repeat(60)}`; // the message quotes 80 UTF-16 units: cuts an emoji in two
    const body = new TextEncoder().encode(JSON.stringify({ name }));
    for (const protocol of ["grpc", "grpc-web"] as const) {
      const answer = await send({
        protocol,
        binary: false,
        path: "runlater.v1.QueueService/GetQueue",
        body: envelope(body),
      });
      expect(answer.code).toBe("invalid_argument");
      expect(answer.message).toMatch(/is not a valid queue name/);
    }
  });

  it("counts the code the client got in the metrics", async () => {
    await send({
      protocol: "connect-stream",
      path: "runlater.v1.WorkerService/DequeueStream",
      body: envelope(garbage),
    });
    const metrics = await (await fetch(`${t.server.url}/metrics`)).text();
    expect(metrics).toMatch(
      /runlater_rpc_duration_seconds_count\{method="DequeueStream",code="invalid_argument"\} [1-9]/,
    );
    expect(metrics).not.toMatch(/code="internal"/);
  });
});

describe.each(storeKinds)("values no server issues (%s)", (kind) => {
  let t: Target;
  let jobId: string;
  beforeAll(async () => {
    t = await serve(kind);
    await t.rpc("QueueService/CreateQueue", { name: "q" });
    const { body } = await t.rpc("JobService/Enqueue", { jobs: [{ queue: "q" }] });
    jobId = (body.jobIds as string[])[0]!;
    await t.rpc("WorkerService/Dequeue", { queue: "q" });
  });
  afterAll(() => t.stop());

  it("a job id that is not one is not found, with the others found", async () => {
    const answer = await t.rpc("JobService/GetJobs", { jobIds: ["q.0.\u{1F600}\u2603", jobId, "\u00e9"] });
    expect(answer.status).toBe(200);
    expect((answer.body.jobs as Array<{ jobId: string }>).map((j) => j.jobId)).toEqual([jobId]);
    expect(answer.body.notFoundJobIds).toEqual(["q.0.\u{1F600}\u2603", "\u00e9"]);
  });

  it("a claim token that is not one is stale", async () => {
    for (const claimToken of ["\u{1F600}\u{1F600}", "x".repeat(65)]) {
      const ack = await t.rpc("WorkerService/Ack", { queue: "q", succeeded: [{ jobId, claimToken }] });
      expect(ack.status).toBe(200);
      expect(ack.body.results).toEqual([{ jobId, outcome: "OUTCOME_STALE_CLAIM" }]);
      const checkpoint = await t.rpc("WorkerService/Checkpoint", { queue: "q", checkpoints: [{ jobId, claimToken }] });
      expect(checkpoint.status).toBe(200);
      expect((checkpoint.body.results as Array<{ outcome: string }>)[0]!.outcome).toBe("OUTCOME_STALE_CLAIM");
    }
    expect(t.errors).toEqual([]);
  });
});
