/**
 * A job handed out, as runlater.v1.DequeuedJob: written by a broker's WorkerService and
 * read back by a node that forwarded the Dequeue to it (cluster/peers.ts).
 */
import type { DequeuedJob } from "@runlater/sdk/gen/worker_service_pb.js";
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
