/** Conversions between runlater.v1 messages and the engine's domain values. */
import { create } from "@bufbuild/protobuf";
import { type Job, JobSchema, JobState } from "@runlater/sdk/gen/job_pb.js";
import {
  type Queue,
  type QueueConfig,
  QueueConfigSchema,
  QueueCountersSchema,
  QueueSchema,
  QueueStatsSchema,
  RetryPolicySchema,
} from "@runlater/sdk/gen/queue_service_pb.js";
import { type AckRequest, type JobOutcome, Outcome } from "@runlater/sdk/gen/worker_service_pb.js";
import { invalidArgument } from "../domain/errors.js";
import type { JobFilter } from "../domain/job-filter.js";
import type { JobRecord } from "../domain/job-record.js";
import { visibleOrderingKey } from "../domain/ordering.js";
import type { QueueConfigInput } from "../domain/queue-config.js";
import { visibleState } from "../domain/transitions.js";
import type { AckInput, JobOutcome as DomainOutcome, QueueView } from "../engine/inputs.js";
import type { QueueTotal } from "../engine/queue-totals.js";
import type { EveryField } from "../wire/every-field.js";
import { durationToMs, msToDuration, msToTimestamp } from "../wire/time.js";

const stateToProto = {
  pending: JobState.PENDING,
  running: JobState.RUNNING,
  succeeded: JobState.SUCCEEDED,
  failed: JobState.FAILED,
} as const;

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
    traceparent: job.traceparent ?? "",
  });
}

const outcomeToProto = {
  acknowledged: Outcome.ACKNOWLEDGED,
  stale_claim: Outcome.STALE_CLAIM,
  not_found: Outcome.NOT_FOUND,
} as const;

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

/** `counters`: this node's totals for the queue (QueueStats.counters), counted since `since` (epoch ms). */
export function queueToProto(view: QueueView, counters?: QueueTotal, since?: number): Queue {
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
      counters: counters
        ? create(QueueCountersSchema, {
            enqueued: BigInt(counters.enqueued),
            succeeded: BigInt(counters.succeeded),
            failed: BigInt(counters.failed),
            countingSince: since === undefined ? undefined : msToTimestamp(since),
          })
        : undefined,
    }),
  });
}

/** An Ack (or the ack riding on a Dequeue or a DequeueStream message) as the engine takes it. */
export function ackFromProto(req: AckRequest): AckInput {
  return {
    queue: req.queue,
    succeeded: req.succeeded.map((s) => ({
      jobId: s.jobId,
      claimToken: s.claimToken,
      customStatus: s.customStatus,
      result: s.result,
      noEvents: s.noEvents,
    })),
    failed: req.failed.map((f, i) => ({
      jobId: f.jobId,
      claimToken: f.claimToken,
      customStatus: f.customStatus,
      retryDelayMs: durationToMs(f.retryDelay, `failed[${i}].retry_delay`),
      noRetry: f.noRetry,
    })),
  };
}
