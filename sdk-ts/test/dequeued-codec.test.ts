/**
 * The Worker reads DequeueStream's jobs by hand (src/worker/dequeued-codec.ts): whatever
 * the server sends, it must get exactly what protobuf-es's fromBinary gives, and a change
 * to DequeuedJob's fields must not go unnoticed.
 */
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { type SeededValues, seededValues } from "../../test/seeded-values.js";
import { createRunlaterClient } from "../src/client.js";
import { DequeuedJobSchema, DequeueStreamResponseSchema, Outcome } from "../src/gen/runlater/v1/worker_service_pb.js";
import {
  DEQUEUED_JOB_FIELDS,
  RawDequeueWorkerService,
  rawStreamClient,
  readDequeuedJob,
  readJobs,
} from "../src/worker/dequeued-codec.js";

const RawSchema = RawDequeueWorkerService.method.dequeueStream.output;
type JobInit = MessageInitShape<typeof DequeuedJobSchema>;

/** A Timestamp anywhere within ±2^39 s of 1970 (negative seconds included), with its nanos. */
const stamp = (g: SeededValues) => ({ seconds: BigInt(g.int(2 ** 40)) - 2n ** 39n, nanos: g.int(1_000_000_000) });

function randomJob(g: SeededValues): JobInit {
  const maybe = <T>(value: () => T): T | undefined => (g.next() < 0.5 ? value() : undefined);
  return {
    jobId: g.next() < 0.1 ? "" : `q_${g.int(1000)}.${g.int(64)}.${g.text()}`,
    body: new Uint8Array(g.int(3) === 0 ? 0 : g.int(3000)).map(() => g.int(256)),
    priority: g.int(3) === 0 ? 0 : g.int(2) === 0 ? 4_294_967_295 : g.int(10),
    attempt: g.int(1000),
    attemptsAllowed: g.int(1000),
    claimToken: g.next() < 0.2 ? "" : g.text(),
    claimExpiresAt: maybe(() => stamp(g)),
    createdAt: maybe(() => stamp(g)),
    customStatus: g.next() < 0.5 ? "" : g.text(),
    workflow: maybe(() => ({
      workflow: g.text(),
      version: g.int(100),
      instanceId: g.text(),
      job: g.text(),
      run: g.int(50),
      triggeredBy: Array.from({ length: g.int(3) }, () => ({
        eventId: g.text(),
        input: `job:${g.text()}`,
        fromJob: g.text(),
        fromRun: g.int(9),
        customStatus: g.text(),
        result: new Uint8Array(g.int(20)).fill(7),
        postedAt: maybe(() => stamp(g)),
      })),
    })),
    traceparent: g.next() < 0.5 ? "" : `00-${"ab".repeat(16)}-${"cd".repeat(8)}-01`,
  };
}

describe("reading DequeueStream's jobs by hand", () => {
  it("reads every field DequeuedJob has: a field added to the proto fails here until the codec reads it", () => {
    expect(DequeuedJobSchema.fields.map((f) => f.number).sort((a, b) => a - b)).toEqual(DEQUEUED_JOB_FIELDS);
  });

  it("gives what fromBinary gives, for 300 answers of random jobs (every field, empty and extreme values, UTF-8)", () => {
    const g = seededValues(7);
    for (let i = 0; i < 300; i++) {
      const answer = create(DequeueStreamResponseSchema, {
        jobs: Array.from({ length: g.int(6) }, () => randomJob(g)),
        ack: g.next() < 0.3 ? { results: [{ jobId: g.text(), outcome: Outcome.ACKNOWLEDGED }] } : undefined,
      });
      const bytes = toBinary(DequeueStreamResponseSchema, answer);
      const theirs = fromBinary(DequeueStreamResponseSchema, bytes);
      const raw = fromBinary(RawSchema, bytes);
      expect({ jobs: readJobs(raw), ack: raw.ack }).toEqual({ jobs: theirs.jobs, ack: theirs.ack });
    }
  });

  it("skips fields it does not know (a newer server), as fromBinary leaves them unread", () => {
    const job = create(DequeuedJobSchema, randomJob(seededValues(3)));
    const writer = new BinaryWriter();
    writer.raw(toBinary(DequeuedJobSchema, job));
    writer.tag(12, WireType.Varint).uint64(2n ** 60n);
    writer.tag(13, WireType.LengthDelimited).string("from the future");
    writer.tag(14, WireType.Bit32).fixed32(7);
    writer.tag(15, WireType.Bit64).fixed64(9n);
    const bytes = writer.finish();
    const { $unknown: _, ...known } = fromBinary(DequeuedJobSchema, bytes);
    expect(readDequeuedJob(bytes)).toEqual(known);
  });

  it("refuses a job cut short, as fromBinary does", () => {
    const bytes = toBinary(DequeuedJobSchema, create(DequeuedJobSchema, randomJob(seededValues(11))));
    for (const cut of [1, 5, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const short = bytes.subarray(0, cut);
      let theirs: unknown;
      try {
        theirs = fromBinary(DequeuedJobSchema, short);
      } catch (e) {
        theirs = e;
      }
      if (theirs instanceof Error) expect(() => readDequeuedJob(short)).toThrow();
      else expect(readDequeuedJob(short)).toEqual(theirs); // a cut that falls between two fields
    }
  });

  it("is used over binary protobuf only: a JSON client reads the stream through protobuf-es as before", () => {
    const binary = createRunlaterClient("http://127.0.0.1:1", { httpVersion: "2" });
    const json = createRunlaterClient("http://127.0.0.1:1", { httpVersion: "2", binary: false });
    const grpc = createRunlaterClient("http://127.0.0.1:1", { protocol: "grpc" });
    try {
      expect(rawStreamClient(binary)).toBeDefined();
      expect(rawStreamClient(grpc)).toBeDefined();
      expect(rawStreamClient(json)).toBeUndefined();
      // A client object not made by createRunlaterClient: no transport to read through.
      expect(rawStreamClient({ ...binary })).toBeUndefined();
    } finally {
      for (const c of [binary, json, grpc]) c.close();
    }
  });
});
