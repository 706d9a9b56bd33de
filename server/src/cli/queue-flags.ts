/**
 * The flags that set QueueConfig fields, shared by `queue create` and `queue update`, and
 * their translation into a QueueConfig plus the update_mask naming exactly the fields given.
 */
import { create } from "@bufbuild/protobuf";
import { durationFromMs, type FieldMask, FieldMaskSchema } from "@bufbuild/protobuf/wkt";
import { type QueueConfig, QueueConfigSchema, RetryPolicySchema } from "@runlater/sdk/gen/queue_service_pb.js";
import { type Command, Option } from "commander";
import { nonNegativeNumber, parseDurationMs, positiveInt, uint32 } from "./parse.js";

/** Parsed flag values (durations already in ms). Absent = not given. */
export interface QueueFlagValues {
  priorities?: number;
  claimTimeout?: number;
  retryInitialDelay?: number;
  retryLinearSteps?: number;
  retryMaxDelay?: number;
  defaultAttempts?: number;
  maxDequeuePerSecond?: number;
  succeededRetention?: number;
  failedRetention?: number;
  maxBodyBytes?: number;
  // create only
  paused?: boolean;
  fifo?: boolean;
  partitions?: number;
  // update only: the two spellings of the paused field
  pause?: boolean;
  resume?: boolean;
}

/** Flags both commands accept: the fields UpdateQueue can change at runtime. */
export function addTunableFlags(cmd: Command): Command {
  return cmd
    .option("--priorities <n>", "priority levels, 1 (highest) to n; at most 10, may only grow (default 3)", positiveInt)
    .option(
      "--claim-timeout <duration>",
      "how long a worker holds a job before the attempt counts as failed, e.g. 30s, 500ms, 5m (default 5m, at least 100ms)",
      parseDurationMs,
    )
    .option(
      "--retry-initial-delay <duration>",
      "retry policy: base delay between attempts (default 5s)",
      parseDurationMs,
    )
    .option(
      "--retry-linear-steps <n>",
      "retry policy: retries that grow linearly before growth turns exponential (default 5)",
      uint32,
    )
    .option(
      "--retry-max-delay <duration>",
      "retry policy: upper bound on any retry delay (default 1h)",
      parseDurationMs,
    )
    .option(
      "--default-attempts <n>",
      "attempts a job gets when it names none: first try + retries (default 11, at most 1000)",
      uint32,
    )
    .option(
      "--max-dequeue-per-second <rate>",
      "rate limit on jobs handed to workers, fractions allowed; 0 = unlimited (default 0)",
      nonNegativeNumber,
    )
    .option("--succeeded-retention <duration>", "how long SUCCEEDED jobs are kept (default 1d)", parseDurationMs)
    .option("--failed-retention <duration>", "how long FAILED jobs are kept (default 7d)", parseDurationMs)
    .option("--max-body-bytes <n>", "largest job body accepted, in bytes (default 1048576, at most 16 MiB)", uint32)
    .option(
      "--partitions <n>",
      "number of partitions, at most 256 (default 1); may grow later, never shrink",
      positiveInt,
    );
}

/** Flags only `queue create` accepts: fixed at create, or a starting state. */
export function addCreateOnlyFlags(cmd: Command): Command {
  return cmd
    .option(
      "--paused",
      "create the queue paused: it accepts enqueues but hands out nothing until `queue update --resume`",
    )
    .option("--fifo", "strict enqueue order: one partition, one job at a time; fixed at create");
}

/** Flags only `queue update` accepts: pausing is a verb there. */
export function addUpdateOnlyFlags(cmd: Command): Command {
  return cmd
    .addOption(
      new Option("--pause", "pause the queue: it keeps accepting enqueues and acks but hands out nothing").conflicts(
        "resume",
      ),
    )
    .addOption(new Option("--resume", "resume a paused queue"));
}

/** The QueueConfig the flags describe, and the proto field paths they set. */
export function queueConfigFromFlags(v: QueueFlagValues): { config: QueueConfig; paths: string[] } {
  const config = create(QueueConfigSchema);
  const paths: string[] = [];
  const set = (path: string, given: boolean, apply: () => void) => {
    if (!given) return;
    apply();
    paths.push(path);
  };
  set("priorities", v.priorities !== undefined, () => (config.priorities = v.priorities ?? 0));
  set("claim_timeout", v.claimTimeout !== undefined, () => (config.claimTimeout = durationFromMs(v.claimTimeout ?? 0)));
  const retry = () => (config.retryPolicy ??= create(RetryPolicySchema));
  set(
    "retry_policy.initial_delay",
    v.retryInitialDelay !== undefined,
    () => (retry().initialDelay = durationFromMs(v.retryInitialDelay ?? 0)),
  );
  set(
    "retry_policy.linear_steps",
    v.retryLinearSteps !== undefined,
    () => (retry().linearSteps = v.retryLinearSteps ?? 0),
  );
  set(
    "retry_policy.max_delay",
    v.retryMaxDelay !== undefined,
    () => (retry().maxDelay = durationFromMs(v.retryMaxDelay ?? 0)),
  );
  set(
    "default_attempts_allowed",
    v.defaultAttempts !== undefined,
    () => (config.defaultAttemptsAllowed = v.defaultAttempts ?? 0),
  );
  set(
    "max_dequeue_per_second",
    v.maxDequeuePerSecond !== undefined,
    () => (config.maxDequeuePerSecond = v.maxDequeuePerSecond ?? 0),
  );
  set(
    "succeeded_retention",
    v.succeededRetention !== undefined,
    () => (config.succeededRetention = durationFromMs(v.succeededRetention ?? 0)),
  );
  set(
    "failed_retention",
    v.failedRetention !== undefined,
    () => (config.failedRetention = durationFromMs(v.failedRetention ?? 0)),
  );
  set("max_body_bytes", v.maxBodyBytes !== undefined, () => (config.maxBodyBytes = v.maxBodyBytes ?? 0));
  set(
    "paused",
    v.paused === true || v.pause === true || v.resume === true,
    () => (config.paused = v.paused === true || v.pause === true),
  );
  set("fifo", v.fifo === true, () => (config.fifo = true));
  set("partitions", v.partitions !== undefined, () => (config.partitions = v.partitions ?? 0));
  return { config, paths };
}

export function fieldMask(paths: string[]): FieldMask {
  return create(FieldMaskSchema, { paths });
}
