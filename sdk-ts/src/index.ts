/**
 * @runlater/sdk: a typed client and a worker framework for runlater.
 * Explicit named exports only, so the public surface is exactly this list.
 */

// ---- For users: producing jobs, working on them, handling errors ----

export type { JobBody, JsonValue } from "./body.js";
export type { EnqueueOptions, EnqueueSpec, RunlaterClient, RunlaterClientOptions } from "./client.js";
export { createRunlaterClient } from "./client.js";
export { DoNotRetry, RetryAfter, Snooze, snooze } from "./control.js";
export { errorInfo, errorReason } from "./errors.js";
export type { ErrorInfo } from "./gen/runlater/v1/errors_pb.js";
// Protocol enums and messages users meet in results of the raw clients.
export { ErrorReason } from "./gen/runlater/v1/errors_pb.js";
export type { Job, JobSpec } from "./gen/runlater/v1/job_pb.js";
export { JobState } from "./gen/runlater/v1/job_pb.js";
export type {
  Queue,
  QueueConfig,
  QueueStats,
  RetryPolicy as QueueRetryPolicy,
} from "./gen/runlater/v1/queue_service_pb.js";
export type { DequeuedJob, JobOutcome } from "./gen/runlater/v1/worker_service_pb.js";
export { Outcome } from "./gen/runlater/v1/worker_service_pb.js";
export type { WorkflowContext, WorkflowEvent } from "./gen/runlater/v1/workflow_service_pb.js";
export type { QueueOptions } from "./queue-options.js";
export type { RetryPolicy } from "./retry.js";
export { constant, exponential, linear, pinlaterDefault } from "./retry.js";
export type { HttpVersion, Protocol } from "./transport.js";
export type { WorkerErrorContext, WorkerErrorHandler } from "./worker/types.js";
export type { HandlerResult, JobHandler, WorkerJob } from "./worker/worker-job.js";
export type { WorkerOptions, WorkerSettings } from "./worker.js";
export { Worker } from "./worker.js";

// ---- For integrators: services and schemas, to build transports, servers, tools ----

export { decodeJson, decodeText, encodeBody } from "./body.js";
export { ErrorInfoSchema, ErrorReasonSchema } from "./gen/runlater/v1/errors_pb.js";
export { JobSchema, JobSpecSchema, JobStateSchema } from "./gen/runlater/v1/job_pb.js";
export { JobService } from "./gen/runlater/v1/job_service_pb.js";
export {
  QueueConfigSchema,
  QueueSchema,
  QueueService,
  QueueStatsSchema,
  RetryPolicySchema as QueueRetryPolicySchema,
} from "./gen/runlater/v1/queue_service_pb.js";
export {
  DequeuedJobSchema,
  JobCheckpointSchema,
  JobFailureSchema,
  JobSuccessSchema,
  OutcomeSchema,
  WorkerService,
} from "./gen/runlater/v1/worker_service_pb.js";
export { readTls, type TlsMaterial, type TlsOptions } from "./tls.js";
export type { OpenedTransport, TransportOptions } from "./transport.js";
export { openTransport } from "./transport.js";
