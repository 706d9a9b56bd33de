/**
 * A DequeueStream over binary protobuf carries its jobs encoded by hand
 * (wire/dequeued-job.ts encodeDequeuedJobs): the bytes must be exactly protobuf-es's for
 * the same message, and a change to DequeuedJob's fields must not go unnoticed.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import { DequeuedJobSchema, DequeueStreamResponseSchema } from "@runlater/sdk/gen/worker_service_pb.js";
import { describe, expect, it } from "vitest";
import { type SeededValues, seededValues } from "../../../test/seeded-values.js";
import type { JobRecord } from "../../src/domain/job-record.js";
import { encodeJobContext } from "../../src/domain/workflow-codec.js";
import { dequeuedToProto, ENCODED_DEQUEUED_JOB_FIELDS, encodeDequeuedJobs } from "../../src/wire/dequeued-job.js";

function randomJob(g: SeededValues): JobRecord {
  const ms = () => (g.int(4) === 0 ? 0 : 1_600_000_000_000 + g.int(2 ** 40) + (g.int(2) === 0 ? 0 : g.int(1000)));
  return {
    id: g.int(10) === 0 ? "" : `q_${g.int(100)}.${g.int(8)}.${g.text()}`,
    queue: "q",
    partition: 0,
    state: "running",
    priority: g.int(3) === 0 ? 0 : g.int(2) === 0 ? 4_294_967_295 : g.int(10),
    body: new Uint8Array(g.int(3) === 0 ? 0 : g.int(2000)).map(() => g.int(256)),
    runAfter: ms(),
    attemptsAllowed: g.int(1000),
    attemptsRemaining: g.int(1000),
    attempt: g.int(1000),
    customStatus: g.next() < 0.5 ? "" : g.text(),
    createdAt: ms(),
    updatedAt: ms(),
    finishedAt: 0,
    claimToken: g.next() < 0.2 ? "" : g.text(),
    claimExpiresAt: ms(),
    retryDelayMs: 0,
    bufferEpoch: 0,
    idempotencyKey: "",
    orderingKey: "",
    seq: 0,
    ...(g.next() < 0.3
      ? {
          workflow: encodeJobContext({
            workflow: g.text(),
            version: g.int(9),
            instanceId: g.text(),
            job: g.text(),
            run: g.int(9),
            triggeredBy: Array.from({ length: g.int(3) }, () => ({
              input: `job:${g.text()}`,
              event: {
                id: g.text(),
                postedAt: ms(),
                from: { job: g.text(), run: g.int(5) },
                customStatus: g.text(),
                result: new Uint8Array(g.int(10)).fill(3),
              },
            })),
          }),
        }
      : {}),
    ...(g.next() < 0.5 ? { traceparent: `00-${"ab".repeat(16)}-${"cd".repeat(8)}-01` } : {}),
  };
}

describe("DequeuedJob encoded by hand", () => {
  it("writes every field DequeuedJob has: a field added to the proto fails here until the encoder writes it", () => {
    expect(DequeuedJobSchema.fields.map((f) => f.number).sort((a, b) => a - b)).toEqual(ENCODED_DEQUEUED_JOB_FIELDS);
  });

  /** A hand-out as the server writes it over binary protobuf (api/dequeue-stream.ts), and as protobuf-es would. */
  const bothWays = (jobs: JobRecord[]) => {
    const handOut = create(DequeueStreamResponseSchema, { jobs: [] });
    handOut.$unknown = [{ no: 1, wireType: WireType.LengthDelimited, data: encodeDequeuedJobs(jobs) }];
    const ours = toBinary(DequeueStreamResponseSchema, handOut, { writeUnknownFields: true });
    const theirs = toBinary(
      DequeueStreamResponseSchema,
      create(DequeueStreamResponseSchema, { jobs: jobs.map((j) => dequeuedToProto(j, false)) }),
    );
    return { ours: Buffer.from(ours), theirs: Buffer.from(theirs) };
  };

  it("writes protobuf-es's bytes, to the byte, for 300 hand-outs of random jobs (every field, extreme values, UTF-8)", () => {
    const g = seededValues(5);
    for (let batch = 0; batch < 300; batch++) {
      const { ours, theirs } = bothWays(Array.from({ length: 1 + g.int(12) }, () => randomJob(g)));
      expect(ours).toEqual(theirs);
    }
  });

  it("writes a job of the largest sizes (lengths of several varint bytes) as protobuf-es does", () => {
    const job = randomJob(seededValues(1));
    const big = {
      ...job,
      body: new Uint8Array(3_000_000).fill(9),
      customStatus: "é".repeat(70_000),
      priority: 4_294_967_295,
    };
    const { ours, theirs } = bothWays([big, job, big]);
    expect(ours.equals(theirs)).toBe(true);
    expect(fromBinary(DequeueStreamResponseSchema, ours).jobs.map((j) => j.body.length)).toEqual([
      3_000_000,
      job.body.length,
      3_000_000,
    ]);
  });

  it("writes no jobs as no bytes", () => {
    expect(encodeDequeuedJobs([])).toHaveLength(0);
  });
});
