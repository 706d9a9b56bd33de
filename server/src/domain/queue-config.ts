import { formatDuration } from "./duration.js";
import { invalidArgument, RunlaterError } from "./errors.js";
import { limits } from "./limits.js";
import { defaultRetryPolicy, type RetryPolicy } from "./retry-policy.js";

/** A queue's settings with every default filled in; durations in milliseconds. */
export interface QueueConfig {
  priorities: number;
  claimTimeoutMs: number;
  retryPolicy: RetryPolicy;
  defaultAttemptsAllowed: number;
  /** Jobs handed out per second; 0 = unlimited. */
  maxDequeuePerSecond: number;
  paused: boolean;
  succeededRetentionMs: number;
  failedRetentionMs: number;
  fifo: boolean;
  partitions: number;
  /**
   * The partitions jobs with an ordering or idempotency key hash over: the count the
   * queue was created with. Partitions added later take only keyless jobs, so growing a
   * queue never splits a key's jobs over two partitions (undefined in records written
   * before growth existed: the same as `partitions`).
   */
  keyPartitions?: number;
  maxBodyBytes: number;
}

export const DAY_MS = 86_400_000;

export const defaultQueueConfig: QueueConfig = {
  priorities: 3,
  claimTimeoutMs: 5 * 60_000,
  retryPolicy: defaultRetryPolicy,
  defaultAttemptsAllowed: 11,
  maxDequeuePerSecond: 0,
  paused: false,
  succeededRetentionMs: DAY_MS,
  failedRetentionMs: 7 * DAY_MS,
  fifo: false,
  partitions: 1,
  maxBodyBytes: 1024 * 1024,
};

/** Fields a caller may set; a zero/undefined value means "the default" on create. */
export type QueueConfigInput = Partial<Omit<QueueConfig, "retryPolicy">> & {
  retryPolicy?: Partial<RetryPolicy>;
};

/** The config fields UpdateQueue accepts in its mask (proto names). */
export const updatableFields = [
  "priorities",
  "claim_timeout",
  "retry_policy",
  "default_attempts_allowed",
  "max_dequeue_per_second",
  "paused",
  "succeeded_retention",
  "failed_retention",
  "max_body_bytes",
  "partitions",
] as const;
export const fixedFields = ["fifo"] as const;

const QUEUE_NAME = /^[A-Za-z0-9_]+$/;

export function validateQueueName(name: string, field = "queue"): void {
  if (name === "") {
    throw new RunlaterError("invalid_argument", "INVALID_QUEUE_NAME", `${field} is empty: name a queue`, field);
  }
  if (name.length > limits.queueNameMaxLength || !QUEUE_NAME.test(name)) {
    throw new RunlaterError(
      "invalid_argument",
      "INVALID_QUEUE_NAME",
      `${field} "${name.slice(0, 80)}" is not a valid queue name: use 1 to ${limits.queueNameMaxLength} ` +
        "letters, digits and underscores",
      field,
    );
  }
}

/** Fills defaults for a new queue and validates every field. */
export function resolveQueueConfig(input: QueueConfigInput = {}): QueueConfig {
  const pick = <K extends keyof QueueConfig>(key: K): QueueConfig[K] => {
    const value = input[key];
    return (value === undefined || value === 0 ? defaultQueueConfig[key] : value) as QueueConfig[K];
  };
  const config: QueueConfig = {
    priorities: pick("priorities"),
    claimTimeoutMs: pick("claimTimeoutMs"),
    retryPolicy: resolveRetryPolicy(input.retryPolicy, defaultRetryPolicy),
    defaultAttemptsAllowed: pick("defaultAttemptsAllowed"),
    maxDequeuePerSecond: input.maxDequeuePerSecond ?? 0,
    paused: input.paused ?? false,
    succeededRetentionMs: pick("succeededRetentionMs"),
    failedRetentionMs: pick("failedRetentionMs"),
    fifo: input.fifo ?? false,
    partitions: input.fifo ? 1 : pick("partitions"),
    maxBodyBytes: pick("maxBodyBytes"),
  };
  config.keyPartitions = config.partitions;
  if (input.fifo && input.partitions && input.partitions > 1) {
    throw invalidArgument("config.partitions", "a fifo queue has exactly one partition: leave partitions unset");
  }
  validateQueueConfig(config);
  return config;
}

function resolveRetryPolicy(input: Partial<RetryPolicy> | undefined, base: RetryPolicy): RetryPolicy {
  return {
    initialDelayMs: input?.initialDelayMs || base.initialDelayMs,
    linearSteps: input?.linearSteps || base.linearSteps,
    maxDelayMs: input?.maxDelayMs || base.maxDelayMs,
  };
}

/** Applies the fields named in `mask` (proto field names) to `current`. */
export function updateQueueConfig(current: QueueConfig, input: QueueConfigInput, mask: string[]): QueueConfig {
  if (mask.length === 0) {
    throw invalidArgument(
      "update_mask",
      `update_mask is empty: name the fields to change (${updatableFields.join(", ")})`,
    );
  }
  const next: QueueConfig = { ...current, retryPolicy: { ...current.retryPolicy } };
  for (const path of mask) {
    const [head, sub] = path.split(".");
    switch (head) {
      case "priorities":
        next.priorities = input.priorities || defaultQueueConfig.priorities;
        if (next.priorities < current.priorities) {
          throw invalidArgument(
            "config.priorities",
            `priorities can only grow (now ${current.priorities}): jobs may use every level`,
          );
        }
        break;
      case "claim_timeout":
        next.claimTimeoutMs = input.claimTimeoutMs || defaultQueueConfig.claimTimeoutMs;
        break;
      case "retry_policy":
        if (sub === undefined) next.retryPolicy = resolveRetryPolicy(input.retryPolicy, defaultRetryPolicy);
        else if (sub === "initial_delay")
          next.retryPolicy.initialDelayMs = input.retryPolicy?.initialDelayMs || defaultRetryPolicy.initialDelayMs;
        else if (sub === "linear_steps")
          next.retryPolicy.linearSteps = input.retryPolicy?.linearSteps || defaultRetryPolicy.linearSteps;
        else if (sub === "max_delay")
          next.retryPolicy.maxDelayMs = input.retryPolicy?.maxDelayMs || defaultRetryPolicy.maxDelayMs;
        else throw invalidArgument("update_mask", `unknown field "${path}" in update_mask`);
        break;
      case "default_attempts_allowed":
        next.defaultAttemptsAllowed = input.defaultAttemptsAllowed || defaultQueueConfig.defaultAttemptsAllowed;
        break;
      case "max_dequeue_per_second":
        next.maxDequeuePerSecond = input.maxDequeuePerSecond ?? 0;
        break;
      case "paused":
        next.paused = input.paused ?? false;
        break;
      case "succeeded_retention":
        next.succeededRetentionMs = input.succeededRetentionMs || defaultQueueConfig.succeededRetentionMs;
        break;
      case "failed_retention":
        next.failedRetentionMs = input.failedRetentionMs || defaultQueueConfig.failedRetentionMs;
        break;
      case "max_body_bytes":
        next.maxBodyBytes = input.maxBodyBytes || defaultQueueConfig.maxBodyBytes;
        break;
      case "partitions":
        next.partitions = input.partitions || current.partitions;
        next.keyPartitions = current.keyPartitions ?? current.partitions;
        if (next.partitions < current.partitions) {
          throw invalidArgument(
            "config.partitions",
            `partitions can only grow (now ${current.partitions}): jobs live in every partition`,
          );
        }
        if (current.fifo && next.partitions !== 1)
          throw invalidArgument("config.partitions", "a fifo queue has exactly one partition");
        break;
      case "fifo":
        throw invalidArgument("update_mask", `${head} is fixed when the queue is created and cannot be updated`);
      default:
        throw invalidArgument(
          "update_mask",
          `unknown field "${path}" in update_mask; updatable: ${updatableFields.join(", ")}`,
        );
    }
  }
  validateQueueConfig(next);
  return next;
}

function validateQueueConfig(c: QueueConfig): void {
  const check = (ok: boolean, field: string, message: string) => {
    if (!ok) throw invalidArgument(`config.${field}`, message);
  };
  check(
    Number.isInteger(c.priorities) && c.priorities >= 1 && c.priorities <= limits.prioritiesMax,
    "priorities",
    `priorities must be 1 to ${limits.prioritiesMax}`,
  );
  check(
    c.claimTimeoutMs >= limits.claimTimeoutMinMs && c.claimTimeoutMs <= limits.claimTimeoutMaxMs,
    "claim_timeout",
    `claim_timeout must be ${limits.claimTimeoutMinMs} ms to ${formatDuration(limits.claimTimeoutMaxMs)}`,
  );
  check(
    c.defaultAttemptsAllowed >= 1 && c.defaultAttemptsAllowed <= limits.attemptsMax,
    "default_attempts_allowed",
    `default_attempts_allowed must be 1 to ${limits.attemptsMax}`,
  );
  check(
    Number.isFinite(c.maxDequeuePerSecond) && c.maxDequeuePerSecond >= 0,
    "max_dequeue_per_second",
    "max_dequeue_per_second must be 0 (unlimited) or positive",
  );
  const retention = `must be positive and at most ${formatDuration(limits.retentionMaxMs)}`;
  check(
    c.succeededRetentionMs > 0 && c.succeededRetentionMs <= limits.retentionMaxMs,
    "succeeded_retention",
    `succeeded_retention ${retention}`,
  );
  check(
    c.failedRetentionMs > 0 && c.failedRetentionMs <= limits.retentionMaxMs,
    "failed_retention",
    `failed_retention ${retention}`,
  );
  check(
    Number.isInteger(c.partitions) && c.partitions >= 1 && c.partitions <= limits.partitionsMax,
    "partitions",
    `partitions must be 1 to ${limits.partitionsMax}`,
  );
  check(
    c.maxBodyBytes >= 1 && c.maxBodyBytes <= limits.maxBodyBytesMax,
    "max_body_bytes",
    `max_body_bytes must be 1 to ${limits.maxBodyBytesMax}`,
  );
  check(
    c.retryPolicy.initialDelayMs >= 0 && c.retryPolicy.maxDelayMs >= c.retryPolicy.initialDelayMs,
    "retry_policy",
    "retry_policy.max_delay must be at least initial_delay",
  );
  check(
    c.retryPolicy.maxDelayMs <= limits.retryDelayMaxMs,
    "retry_policy",
    `retry_policy delays must be at most ${formatDuration(limits.retryDelayMaxMs)}`,
  );
}
