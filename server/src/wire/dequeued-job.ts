/**
 * A job handed out, as runlater.v1.DequeuedJob: written by a broker's WorkerService and
 * read back by a node that forwarded the Dequeue to it (cluster/peers.ts); and written by
 * hand for a DequeueStream over binary protobuf (encodeDequeuedJobs).
 */
import { toBinary } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import type { DequeuedJob } from "@runlater/sdk/gen/worker_service_pb.js";
import { WorkflowContextSchema } from "@runlater/sdk/gen/workflow_service_pb.js";
import { parseJobId } from "../domain/job-id.js";
import type { JobRecord } from "../domain/job-record.js";
import type { EveryField } from "./every-field.js";
import { msToTimestamp, timestampToMs } from "./time.js";
import { jobContextFromProto, jobContextToProto } from "./workflow.js";

/**
 * The message as a literal, not through create(): it runs for every job handed out, and
 * create() walks the schema for each (`satisfies` keeps every field of the type named).
 */
export function dequeuedToProto(job: JobRecord, dryRun: boolean): DequeuedJob {
  const message: DequeuedJob = {
    $typeName: "runlater.v1.DequeuedJob" as const,
    jobId: job.id,
    body: job.body,
    priority: job.priority,
    attempt: dryRun ? job.attempt + 1 : job.attempt,
    attemptsAllowed: job.attemptsAllowed,
    claimToken: dryRun ? "" : job.claimToken,
    claimExpiresAt: dryRun ? undefined : msToTimestamp(job.claimExpiresAt),
    createdAt: msToTimestamp(job.createdAt),
    customStatus: job.customStatus,
    workflow: jobContextToProto(job.workflow),
    traceparent: job.traceparent ?? "",
  } satisfies EveryField<DequeuedJob>;
  return message;
}

/**
 * A job handed out by another broker, as this node's engine needs it to answer (and, if
 * the caller is gone, to release it): the fields of dequeuedToProto, read back.
 */
export function dequeuedFromProto(d: DequeuedJob): JobRecord {
  const where = parseJobId(d.jobId);
  return {
    id: d.jobId,
    queue: where?.queue ?? "",
    partition: where?.partition ?? 0,
    state: "running",
    priority: d.priority,
    body: d.body,
    runAfter: 0,
    attemptsAllowed: d.attemptsAllowed,
    attemptsRemaining: d.attemptsAllowed - d.attempt,
    attempt: d.attempt,
    customStatus: d.customStatus,
    createdAt: timestampToMs(d.createdAt) ?? 0,
    updatedAt: 0,
    finishedAt: 0,
    claimToken: d.claimToken,
    claimExpiresAt: timestampToMs(d.claimExpiresAt) ?? 0,
    retryDelayMs: 0,
    bufferEpoch: 0,
    idempotencyKey: "",
    orderingKey: "",
    seq: 0,
    ...(d.workflow ? { workflow: jobContextFromProto(d.workflow) } : {}),
    ...(d.traceparent ? { traceparent: d.traceparent } : {}),
  };
}

/** The DequeuedJob fields encodeDequeuedJobs writes (server/test/wire checks them against the schema). */
export const ENCODED_DEQUEUED_JOB_FIELDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

/**
 * The bytes protobuf-es writes for a DequeueStreamResponse's `jobs` holding
 * dequeuedToProto(job, false) of each job, less the first entry's tag: each job's length,
 * then its fields, and the next entry's tag before the next job. As the data of one
 * unknown field 1 entry, the router writes that tag and these bytes as they are (see
 * api/dequeue-stream.ts). Written straight into one buffer, sized first: protobuf-es's
 * writer (reflective or not: its BinaryWriter alone costs as much) was an eighth of the
 * server's busy time at 50,000 jobs/s (docs/benchmarks.md, "Reading and writing the jobs
 * by hand"). Fields in the schema's order, default values left out, as protobuf-es does.
 * No jobs: no bytes (and no entry to make of them).
 */
export function encodeDequeuedJobs(jobs: JobRecord[]): Uint8Array {
  const sized = jobs.map(sizeJob);
  let total = 0;
  for (let i = 0; i < sized.length; i++) total += (i > 0 ? 1 : 0) + varintSize(sized[i]!.size) + sized[i]!.size;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < sized.length; i++) {
    const s = sized[i]!;
    if (i > 0) out[at++] = JOBS_TAG;
    at = writeVarint(out, at, s.size);
    const job = s.job;
    if (s.id > 0) at = writeString(out, writeTag(out, at, 1, WireType.LengthDelimited), job.id, s.id);
    if (job.body.length > 0) at = writeBytes(out, writeTag(out, at, 2, WireType.LengthDelimited), job.body);
    if (job.priority !== 0) at = writeVarint(out, writeTag(out, at, 3, WireType.Varint), job.priority);
    if (job.attempt !== 0) at = writeVarint(out, writeTag(out, at, 4, WireType.Varint), job.attempt);
    if (job.attemptsAllowed !== 0) at = writeVarint(out, writeTag(out, at, 5, WireType.Varint), job.attemptsAllowed);
    if (s.token > 0) at = writeString(out, writeTag(out, at, 6, WireType.LengthDelimited), job.claimToken, s.token);
    if (job.claimExpiresAt > 0) at = writeTimestamp(out, at, 7, job.claimExpiresAt, s.expires);
    if (job.createdAt > 0) at = writeTimestamp(out, at, 8, job.createdAt, s.created);
    if (s.status > 0) at = writeString(out, writeTag(out, at, 9, WireType.LengthDelimited), job.customStatus, s.status);
    if (s.workflow) at = writeBytes(out, writeTag(out, at, 10, WireType.LengthDelimited), s.workflow);
    if (s.traceparent > 0)
      at = writeString(out, writeTag(out, at, 11, WireType.LengthDelimited), job.traceparent!, s.traceparent);
  }
  return out;
}

/** The tag of a DequeueStreamResponse's `jobs` entry (field 1, length-delimited). */
const JOBS_TAG = (1 << 3) | WireType.LengthDelimited;

interface SizedJob {
  job: JobRecord;
  /** UTF-8 bytes of the strings, 0 for an empty one (left out). */
  id: number;
  token: number;
  status: number;
  traceparent: number;
  /** Encoded sizes of the two Timestamps' fields, 0 for none (left out). */
  expires: number;
  created: number;
  workflow: Uint8Array | undefined;
  /** The job's encoded size. */
  size: number;
}

function sizeJob(job: JobRecord): SizedJob {
  const context = jobContextToProto(job.workflow);
  const id = Buffer.byteLength(job.id);
  const token = Buffer.byteLength(job.claimToken);
  const status = Buffer.byteLength(job.customStatus);
  const traceparent = job.traceparent ? Buffer.byteLength(job.traceparent) : 0;
  const expires = timestampSize(job.claimExpiresAt);
  const created = timestampSize(job.createdAt);
  const workflow = context && toBinary(WorkflowContextSchema, context);
  const size =
    delimitedSize(id) +
    delimitedSize(job.body.length) +
    varintFieldSize(job.priority) +
    varintFieldSize(job.attempt) +
    varintFieldSize(job.attemptsAllowed) +
    delimitedSize(token) +
    (job.claimExpiresAt > 0 ? 2 + expires : 0) +
    (job.createdAt > 0 ? 2 + created : 0) +
    delimitedSize(status) +
    (workflow ? delimitedSize(workflow.length) : 0) +
    delimitedSize(traceparent);
  return { job, id, token, status, traceparent, expires, created, workflow, size };
}

/** A length-delimited field of `length` bytes: none when empty (proto3 leaves it out). */
function delimitedSize(length: number): number {
  return length > 0 ? 1 + varintSize(length) + length : 0;
}

function varintFieldSize(n: number): number {
  return n !== 0 ? 1 + varintSize(n) : 0;
}

/**
 * The Timestamp wire/time.ts msToTimestamp makes of `ms` (none for ms ≤ 0), by its fields:
 * seconds since 1970 and nanos, each left out when 0.
 */
function timestampSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

function timestampNanos(ms: number): number {
  return (ms % 1000) * 1_000_000;
}

/** A Timestamp's encoded fields' size (at most 1 + 10 + 1 + 5: its length is one byte). */
function timestampSize(ms: number): number {
  if (ms <= 0) return 0;
  return varintFieldSize(timestampSeconds(ms)) + varintFieldSize(timestampNanos(ms));
}

function writeTimestamp(out: Buffer, at: number, field: number, ms: number, size: number): number {
  out[at++] = (field << 3) | WireType.LengthDelimited;
  out[at++] = size;
  const seconds = timestampSeconds(ms);
  const nanos = timestampNanos(ms);
  if (seconds !== 0) at = writeVarint(out, writeTag(out, at, 1, WireType.Varint), seconds);
  if (nanos !== 0) at = writeVarint(out, writeTag(out, at, 2, WireType.Varint), nanos);
  return at;
}

/**
 * Bytes of the varint of a whole number 0 ≤ n < 2^53 (lengths, uint32s, a timestamp's
 * seconds since 1970). Below 2^32 in 32-bit integer steps: a number past 2^30 (seconds
 * since 1970 are) is a heap number to V8, and dividing one allocates.
 */
function varintSize(n: number): number {
  if (n < 2 ** 32) {
    let v = n >>> 0;
    let size = 1;
    while (v >= 0x80) {
      v >>>= 7;
      size++;
    }
    return size;
  }
  return 4 + varintSize(Math.floor(n / 2 ** 28));
}

function writeVarint(out: Buffer, at: number, n: number): number {
  if (n >= 2 ** 32) {
    for (let i = 0; i < 4; i++) {
      out[at++] = (n % 128) | 0x80;
      n = Math.floor(n / 128);
    }
    return writeVarint(out, at, n);
  }
  let v = n >>> 0;
  while (v >= 0x80) {
    out[at++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[at++] = v;
  return at;
}

/** Field numbers here are below 16: a tag is one byte. */
function writeTag(out: Buffer, at: number, field: number, wireType: WireType): number {
  out[at] = (field << 3) | wireType;
  return at + 1;
}

function writeString(out: Buffer, at: number, value: string, bytes: number): number {
  const start = writeVarint(out, at, bytes);
  return start + out.write(value, start, bytes, "utf8");
}

function writeBytes(out: Buffer, at: number, value: Uint8Array): number {
  const start = writeVarint(out, at, value.length);
  out.set(value, start);
  return start + value.length;
}
