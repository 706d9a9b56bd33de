/**
 * @runlater/sdk: a typed client and a worker framework for runlater.
 * Explicit named exports only, so the public surface is exactly this list.
 */

// ---- For users: producing jobs, working on them, handling errors ----

export { createRunlaterClient } from "./client.js";
export type { EnqueueOptions, EnqueueSpec, RunlaterClient, RunlaterClientOptions } from "./client.js";
export type { QueueOptions } from "./queue-options.js";
export type { HttpVersion, Protocol } from "./transport.js";
export type { JobBody, JsonValue } from "./body.js";

export { Worker } from "./worker.js";
export type { WorkerOptions } from "./worker.js";
export type { HandlerResult, JobHandler, WorkerJob } from "./worker/worker-job.js";
export type { WorkerErrorContext, WorkerErrorHandler } from "./worker/types.js";

export { DoNotRetry, RetryAfter, Snooze, snooze } from "./control.js";
export { constant, exponential, linear, pinlaterDefault } from "./retry.js";
export type { RetryPolicy } from "./retry.js";

export { errorInfo, errorReason } from "./errors.js";

// Protocol enums and messages users meet in results of the raw clients.
export { ErrorReason } from "./gen/runlater/v1/errors_pb.js";
export type { ErrorInfo } from "./gen/runlater/v1/errors_pb.js";
export { JobState } from "./gen/runlater/v1/job_pb.js";
export type { Job, JobSpec } from "./gen/runlater/v1/job_pb.js";
export { Outcome } from "./gen/runlater/v1/worker_service_pb.js";
export type { DequeuedJob, JobOutcome } from "./gen/runlater/v1/worker_service_pb.js";
export type { Queue, QueueConfig, QueueStats, RetryPolicy as QueueRetryPolicy } from "./gen/runlater/v1/queue_service_pb.js";

// ---- For integrators: services and schemas, to build transports, servers, tools ----

export { JobService } from "./gen/runlater/v1/job_service_pb.js";
export { WorkerService } from "./gen/runlater/v1/worker_service_pb.js";
export { QueueService } from "./gen/runlater/v1/queue_service_pb.js";
export { ErrorInfoSchema, ErrorReasonSchema } from "./gen/runlater/v1/errors_pb.js";
export { JobSchema, JobSpecSchema, JobStateSchema } from "./gen/runlater/v1/job_pb.js";
export { DequeuedJobSchema, JobCheckpointSchema, JobFailureSchema, JobSuccessSchema, OutcomeSchema } from "./gen/runlater/v1/worker_service_pb.js";
export { QueueConfigSchema, QueueSchema, QueueStatsSchema, RetryPolicySchema as QueueRetryPolicySchema } from "./gen/runlater/v1/queue_service_pb.js";
export { encodeBody, decodeJson, decodeText } from "./body.js";
export { openTransport } from "./transport.js";
export type { OpenedTransport, TransportOptions } from "./transport.js";
