/**
 * Reading the jobs of a DequeueStream without protobuf-es's reflection: the Worker's
 * hottest message. protobuf-es reads a message by walking its schema field by field and
 * builds each one through `create()`; for a batch of 100 jobs that was a quarter of a
 * Worker's busy time at 50,000 jobs/s, on its critical path (docs/benchmarks.md, "Reading
 * and writing the jobs by hand").
 *
 * The stream's answers are read with a schema of the same wire shape whose `jobs` are
 * `repeated bytes` (each job's encoding, a view, nothing decoded), and each job is then
 * read here, field by field, with protobuf-es's own BinaryReader: the same varints,
 * strings and bytes as fromBinary, the same message objects (a DequeuedJob, its
 * Timestamps, its WorkflowContext through fromBinary, rarely there). Fields this SDK does
 * not know (a newer server) are skipped, as fromBinary keeps them unread; a change to
 * DequeuedJob's fields fails sdk-ts/test/dequeued-codec.test.ts until this follows.
 *
 * Binary only: with `binary: false` (Connect JSON) the Worker reads the stream as before.
 */
import { create, createFileRegistry, fromBinary, type Message } from "@bufbuild/protobuf";
import type { GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  type Timestamp,
} from "@bufbuild/protobuf/wkt";
import { type Client, createClient } from "@connectrpc/connect";
import { type RunlaterClient, transportOf } from "../client.js";
import {
  type AckResponse,
  type DequeuedJob,
  type DequeueStreamRequestSchema,
  file_runlater_v1_worker_service,
  WorkerService,
} from "../gen/runlater/v1/worker_service_pb.js";
import { WorkflowContextSchema } from "../gen/runlater/v1/workflow_service_pb.js";

/** DequeueStreamResponse as it travels, its jobs left as bytes. */
export type RawDequeueStreamResponse = Message<"runlater.v1.sdkraw.DequeueStreamResponse"> & {
  jobs: Uint8Array[];
  ack?: AckResponse;
};

/** runlater.v1.DequeueStreamResponse's wire shape with `repeated bytes jobs = 1` (a message is length-delimited too). */
const RawResponseSchema = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "runlater/v1/sdk_raw_dequeue.proto",
    package: "runlater.v1.sdkraw",
    dependency: ["runlater/v1/worker_service.proto"],
    syntax: "proto3",
    messageType: [
      {
        name: "DequeueStreamResponse",
        field: [
          {
            name: "jobs",
            jsonName: "jobs",
            number: 1,
            label: FieldDescriptorProto_Label.REPEATED,
            type: FieldDescriptorProto_Type.BYTES,
          },
          {
            name: "ack",
            jsonName: "ack",
            number: 2,
            label: FieldDescriptorProto_Label.OPTIONAL,
            type: FieldDescriptorProto_Type.MESSAGE,
            typeName: ".runlater.v1.AckResponse",
          },
        ],
      },
    ],
  }),
  (file) => (file === file_runlater_v1_worker_service.proto.name ? file_runlater_v1_worker_service : undefined),
).getMessage("runlater.v1.sdkraw.DequeueStreamResponse") as GenMessage<RawDequeueStreamResponse>;

/**
 * WorkerService with DequeueStream answering RawDequeueStreamResponse: the same method
 * (name, path, kind), another output schema. For createClient over a binary transport.
 */
export const RawDequeueWorkerService = {
  ...WorkerService,
  method: {
    ...WorkerService.method,
    dequeueStream: { ...WorkerService.method.dequeueStream, output: RawResponseSchema },
  },
  methods: WorkerService.methods.map((m) =>
    m.localName === "dequeueStream" ? { ...m, output: RawResponseSchema } : m,
  ),
} as unknown as GenService<{
  dequeueStream: {
    methodKind: "bidi_streaming";
    input: typeof DequeueStreamRequestSchema;
    output: typeof RawResponseSchema;
  };
}>;

/**
 * A client of RawDequeueWorkerService over `client`'s transport when its messages are
 * binary protobuf; undefined for Connect JSON, or a client createRunlaterClient did not make.
 */
export function rawStreamClient(client: RunlaterClient): Client<typeof RawDequeueWorkerService> | undefined {
  const transport = transportOf(client);
  if (!transport || client.options.binary === false) return undefined;
  return createClient(RawDequeueWorkerService, transport);
}

/** The field numbers readDequeuedJob reads (the test checks them against DequeuedJob's schema). */
export const DEQUEUED_JOB_FIELDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/** One job as fromBinary(DequeuedJobSchema, bytes) would give it (unknown fields left unread). */
export function readDequeuedJob(bytes: Uint8Array): DequeuedJob {
  return readJobAt(new BinaryReader(bytes), bytes.length);
}

/**
 * The answer's jobs, read. They are views into the one buffer the answer was read from:
 * one reader over it serves them all (a BinaryReader is a DataView and more, per job).
 */
export function readJobs(raw: { jobs: Uint8Array[] }): DequeuedJob[] {
  const jobs = raw.jobs;
  if (jobs.length === 0) return [];
  let start = jobs[0]!.byteOffset;
  let end = start;
  for (const job of jobs) {
    if (job.buffer !== jobs[0]!.buffer) return jobs.map(readDequeuedJob); // (never from fromBinary; kept correct anyway)
    start = Math.min(start, job.byteOffset);
    end = Math.max(end, job.byteOffset + job.length);
  }
  const reader = new BinaryReader(new Uint8Array(jobs[0]!.buffer, start, end - start));
  return jobs.map((job) => {
    reader.pos = job.byteOffset - start;
    return readJobAt(reader, reader.pos + job.length);
  });
}

/** The job whose fields lie between reader.pos and `end`. */
function readJobAt(reader: BinaryReader, end: number): DequeuedJob {
  const job: DequeuedJob = {
    $typeName: "runlater.v1.DequeuedJob",
    jobId: "",
    body: EMPTY,
    priority: 0,
    attempt: 0,
    attemptsAllowed: 0,
    claimToken: "",
    customStatus: "",
    traceparent: "",
  };
  while (reader.pos < end) {
    // reader.tag() without the array it returns.
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wireType = tag & 7;
    // A field of another wire type than its schema's (3, 4, 5 are varints) is skipped as
    // unknown (fromBinary would misread it; no server sends one).
    const known = wireType === (field >= 3 && field <= 5 ? WireType.Varint : WireType.LengthDelimited);
    switch (known ? field : 0) {
      case 1:
        job.jobId = reader.string();
        break;
      case 2:
        job.body = reader.bytes();
        break;
      case 3:
        job.priority = reader.uint32();
        break;
      case 4:
        job.attempt = reader.uint32();
        break;
      case 5:
        job.attemptsAllowed = reader.uint32();
        break;
      case 6:
        job.claimToken = reader.string();
        break;
      case 7:
        job.claimExpiresAt = readTimestamp(reader);
        break;
      case 8:
        job.createdAt = readTimestamp(reader);
        break;
      case 9:
        job.customStatus = reader.string();
        break;
      case 10:
        job.workflow = fromBinary(WorkflowContextSchema, reader.bytes());
        break;
      case 11:
        job.traceparent = reader.string();
        break;
      default:
        reader.skip(wireType, field);
    }
  }
  if (reader.pos !== end) throw new RangeError("invalid DequeuedJob: its fields overrun its length");
  return job;
}

const EMPTY = new Uint8Array(0);

/** A Timestamp field's value, read where `reader` stands (its length first), on the same reader. */
function readTimestamp(reader: BinaryReader): Timestamp {
  const ts: Timestamp = { $typeName: "google.protobuf.Timestamp", seconds: 0n, nanos: 0 };
  const end = reader.uint32() + reader.pos;
  if (end > reader.len) throw new RangeError("premature EOF"); // as fromBinary, for a length past the end
  while (reader.pos < end) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 1 && wireType === WireType.Varint) ts.seconds = reader.int64() as bigint;
    else if (field === 2 && wireType === WireType.Varint) ts.nanos = reader.int32();
    else reader.skip(wireType, field);
  }
  if (reader.pos !== end) throw new RangeError("invalid Timestamp: its fields overrun its length");
  return ts;
}
