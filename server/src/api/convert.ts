/** Conversions between runlater.v1 messages and the engine's domain values. */
import { create } from "@bufbuild/protobuf";
import { type Duration, DurationSchema, type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { type Job, JobSchema, JobState } from "@runlater/sdk/gen/job_pb.js";
import { type Queue, type QueueConfig, QueueConfigSchema, QueueSchema, QueueStatsSchema, RetryPolicySchema } from "@runlater/sdk/gen/queue_service_pb.js";
import { type AckRequest, type DequeuedJob, type JobOutcome, Outcome } from "@runlater/sdk/gen/worker_service_pb.js";
import type { AckInput, JobOutcome as DomainOutcome, QueueView } from "../engine/engine.js";
import { invalidArgument } from "../engine/errors.js";
import { parseJobId } from "../engine/job-id.js";
import type { JobRecord } from "../engine/job-record.js";
import { visibleOrderingKey } from "../engine/ordering.js";
import type { QueueConfigInput } from "../engine/queue-config.js";
import { visibleState } from "../engine/transitions.js";
import type { JobFilter } from "../store/store.js";

export function durationToMs(d: Duration | undefined, field: string): number | undefined {
  if (!d) return undefined;
  const ms = Number(d.seconds) * 1000 + Math.trunc(d.nanos / 1_000_000);
  if (!Number.isFinite(ms) || ms < 0) throw invalidArgument(field, `${field} must not be negative`);
  return ms;
}

export function msToDuration(ms: number): Duration {
  return create(DurationSchema, { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 });
}

export function timestampToMs(t: Timestamp | undefined): number | undefined {
  return t ? Number(t.seconds) * 1000 + Math.trunc(t.nanos / 1_000_000) : undefined;
}

// The last timestamp made: a Dequeue answer's jobs share their claim expiry and often their
// creation time (one enqueue batch), and messages are never changed once made.
let lastTimestamp: { ms: number; message: Timestamp } | undefined;

export function msToTimestamp(ms: number): Timestamp | undefined {
  if (ms <= 0) return undefined;
  if (lastTimestamp?.ms !== ms) lastTimestamp = { ms, message: create(TimestampSchema, { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 }) };
  return lastTimestamp.message;
}

const stateToProto = { pending: JobState.PENDING, running: JobState.RUNNING, succeeded: JobState.SUCCEEDED, failed: JobState.FAILED } as const;

export function stateFromProto(state: JobState, field = "state"): JobFilter["state"] {
  switch (state) {
    case JobState.UNSPECIFIED:
      return undefined;
    case JobState.PENDING:
      return "pending";
    case JobState.RUNNING:
      return "running";
    case JobState.SUCCEEDED:
      return "succeeded";
    case JobState.FAILED:
      return "failed";
    default:
      throw invalidArgument(field, `${field} ${String(state)} is not a JobState`);
  }
}

export function jobToProto(job: JobRecord, includeBody: boolean): Job {
  return create(JobSchema, {
    jobId: job.id,
    queue: job.queue,
    state: stateToProto[visibleState(job.state)],
    priority: job.priority,
    body: includeBody ? job.body : new Uint8Array(),
    runAfter: msToTimestamp(job.runAfter),
    attemptsAllowed: job.attemptsAllowed,
    attemptsRemaining: job.attemptsRemaining,
    customStatus: job.customStatus,
    createdAt: msToTimestamp(job.createdAt),
    updatedAt: msToTimestamp(job.updatedAt),
    claimExpiresAt: job.state === "running" ? msToTimestamp(job.claimExpiresAt) : undefined,
    finishedAt: msToTimestamp(job.finishedAt),
    orderingKey: visibleOrderingKey(job.orderingKey),
  });
}

/** Every field of a message type, optional ones too: a literal checked against it names them all. */
type EveryField<M> = Record<Exclude<keyof M, "$unknown">, unknown>;

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
  };
}

const outcomeToProto = { acknowledged: Outcome.ACKNOWLEDGED, stale_claim: Outcome.STALE_CLAIM, not_found: Outcome.NOT_FOUND } as const;

export function outcomesToProto(results: DomainOutcome[]): JobOutcome[] {
  // Literals, as for DequeuedJob: one per acked job on the hot path.
  return results.map(
    (r) =>
      ({
        $typeName: "runlater.v1.JobOutcome" as const,
        jobId: r.jobId,
        outcome: outcomeToProto[r.outcome],
        claimExpiresAt: r.claimExpiresAt ? msToTimestamp(r.claimExpiresAt) : undefined,
      }) satisfies EveryField<JobOutcome>,
  );
}

export function queueConfigFromProto(c: QueueConfig | undefined): QueueConfigInput {
  if (!c) return {};
  return {
    priorities: c.priorities,
    claimTimeoutMs: durationToMs(c.claimTimeout, "config.claim_timeout"),
    retryPolicy: c.retryPolicy && {
      initialDelayMs: durationToMs(c.retryPolicy.initialDelay, "config.retry_policy.initial_delay"),
      linearSteps: c.retryPolicy.linearSteps,
      maxDelayMs: durationToMs(c.retryPolicy.maxDelay, "config.retry_policy.max_delay"),
    },
    defaultAttemptsAllowed: c.defaultAttemptsAllowed,
    maxDequeuePerSecond: c.maxDequeuePerSecond,
    paused: c.paused,
    succeededRetentionMs: durationToMs(c.succeededRetention, "config.succeeded_retention"),
    failedRetentionMs: durationToMs(c.failedRetention, "config.failed_retention"),
    fifo: c.fifo,
    partitions: c.partitions,
    maxBodyBytes: c.maxBodyBytes,
  };
}

export function queueToProto(view: QueueView): Queue {
  const c = view.queue.config;
  const s = view.stats;
  return create(QueueSchema, {
    name: view.queue.name,
    config: create(QueueConfigSchema, {
      priorities: c.priorities,
      claimTimeout: msToDuration(c.claimTimeoutMs),
      retryPolicy: create(RetryPolicySchema, {
        initialDelay: msToDuration(c.retryPolicy.initialDelayMs),
        linearSteps: c.retryPolicy.linearSteps,
        maxDelay: msToDuration(c.retryPolicy.maxDelayMs),
      }),
      defaultAttemptsAllowed: c.defaultAttemptsAllowed,
      maxDequeuePerSecond: c.maxDequeuePerSecond,
      paused: c.paused,
      succeededRetention: msToDuration(c.succeededRetentionMs),
      failedRetention: msToDuration(c.failedRetentionMs),
      fifo: c.fifo,
      partitions: c.partitions,
      maxBodyBytes: c.maxBodyBytes,
    }),
    stats: create(QueueStatsSchema, {
      pending: BigInt(s.pending),
      scheduled: BigInt(s.scheduled),
      running: BigInt(s.running),
      succeeded: BigInt(s.succeeded),
      failed: BigInt(s.failed),
      oldestPendingAge: msToDuration(s.oldestPendingAgeMs),
    }),
  });
}

/** An Ack (or the ack riding on a Dequeue or a DequeueStream message) as the engine takes it. */
export function ackFromProto(req: AckRequest): AckInput {
  return {
    queue: req.queue,
    succeeded: req.succeeded.map((s) => ({ jobId: s.jobId, claimToken: s.claimToken, customStatus: s.customStatus })),
    failed: req.failed.map((f, i) => ({
      jobId: f.jobId,
      claimToken: f.claimToken,
      customStatus: f.customStatus,
      retryDelayMs: durationToMs(f.retryDelay, `failed[${i}].retry_delay`),
      noRetry: f.noRetry,
    })),
  };
}
