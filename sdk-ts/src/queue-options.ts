/**
 * A friendlier shape for runlater.v1.QueueConfig: durations in milliseconds instead of
 * google.protobuf.Duration. Every field is optional; unset means the server's default.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { type QueueConfig, QueueConfigSchema } from "./gen/runlater/v1/queue_service_pb.js";

export interface QueueOptions {
  /** Priority levels, 1 (highest) to this; default 3. */
  priorities?: number;
  /** How long a worker holds a job before its claim expires; default 5 min, at least 100 ms. */
  claimTimeoutMs?: number;
  /** The queue's retry delays (see runlater.v1.RetryPolicy); defaults 5 s, 5 linear steps, 1 h. */
  retryPolicy?: { initialDelayMs?: number; linearSteps?: number; maxDelayMs?: number };
  /** Attempts a job gets when it does not say; default 11. */
  defaultAttemptsAllowed?: number;
  /** Jobs handed out per second; 0 = unlimited. */
  maxDequeuePerSecond?: number;
  /** A paused queue accepts enqueues and acks but hands out nothing. */
  paused?: boolean;
  succeededRetentionMs?: number;
  failedRetentionMs?: number;
  /**
   * Strict enqueue order: one partition, one job at a time in the order enqueued, whatever
   * the priorities (ordering keys are ignored). Fixed at create.
   */
  fifo?: boolean;
  /** Partitions; default 1. May grow later (UpdateQueue), never shrink. */
  partitions?: number;
  /** Largest body accepted; default 1 MiB. */
  maxBodyBytes?: number;
}

export function queueConfigFromOptions(o: QueueOptions): QueueConfig {
  const ms = (v: number | undefined) => (v === undefined ? undefined : durationFromMs(v));
  return create(QueueConfigSchema, {
    priorities: o.priorities,
    claimTimeout: ms(o.claimTimeoutMs),
    retryPolicy: o.retryPolicy && {
      initialDelay: ms(o.retryPolicy.initialDelayMs),
      linearSteps: o.retryPolicy.linearSteps,
      maxDelay: ms(o.retryPolicy.maxDelayMs),
    },
    defaultAttemptsAllowed: o.defaultAttemptsAllowed,
    maxDequeuePerSecond: o.maxDequeuePerSecond,
    paused: o.paused,
    succeededRetention: ms(o.succeededRetentionMs),
    failedRetention: ms(o.failedRetentionMs),
    fifo: o.fifo,
    partitions: o.partitions,
    maxBodyBytes: o.maxBodyBytes,
  });
}
