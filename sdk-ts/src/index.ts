/**
 * @runlater/sdk: a typed client and a worker framework for runlater.
 * Explicit named exports only, so the public surface is exactly this list.
 */

// ---- For users: producing jobs, working on them, handling errors ----

export type { JobBody, JsonValue } from "./body.js";
export type { EnqueueOptions, EnqueueSpec, RunlaterClient, RunlaterClientOptions } from "./client.js";
export { createRunlaterClient } from "./client.js";
export type { SuccessOptions } from "./control.js";
export { DoNotRetry, MAX_RESULT_BYTES, RetryAfter, Snooze, Success, snooze, success } from "./control.js";
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
export type {
  CreateScheduleRequest,
  Schedule,
  ScheduleFire,
  ScheduleJobTarget,
  ScheduleWorkflowTarget,
} from "./gen/runlater/v1/schedule_service_pb.js";
export { CatchUp, FireOutcome, OverlapPolicy } from "./gen/runlater/v1/schedule_service_pb.js";
export type { DequeuedJob, JobOutcome } from "./gen/runlater/v1/worker_service_pb.js";
export { Outcome } from "./gen/runlater/v1/worker_service_pb.js";
export type {
  ApplyWorkflowResponse,
  ExternalEvent,
  Instance,
  InstanceJob,
  JobRun,
  Workflow,
  WorkflowContext,
  WorkflowEvent,
  WorkflowInput,
  WorkflowJob,
} from "./gen/runlater/v1/workflow_service_pb.js";
export { FailurePolicy, InstanceJobState, InstanceState, RunOutcome } from "./gen/runlater/v1/workflow_service_pb.js";
export type { PageOptions } from "./paging.js";
export { MAX_PAGE_SIZE } from "./paging.js";
export type { QueueOptions } from "./queue-options.js";
export type { RetryPolicy } from "./retry.js";
export { constant, exponential, linear, pinlaterDefault } from "./retry.js";
export type { CreateScheduleOptions, ScheduleOptions } from "./schedules.js";
export type { HttpVersion, Protocol } from "./transport.js";
export type { WorkerErrorContext, WorkerErrorHandler } from "./worker/types.js";
export type { HandlerResult, JobHandler, WorkerJob } from "./worker/worker-job.js";
export type { WorkerOptions, WorkerSettings } from "./worker.js";
export { Worker } from "./worker.js";
export type { CreatedSchedule, GetScheduleOptions, ListInstancesOptions, WorkflowCalls } from "./workflow-calls.js";
export type {
  ExternalEventOptions,
  StartInstanceOptions,
  WaitForInstanceOptions,
  WorkflowInputSpec,
  WorkflowJobOptions,
} from "./workflows.js";
export { defineWorkflow, externalEvent, WorkflowBuilder } from "./workflows.js";

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
export { ScheduleSchema, ScheduleService } from "./gen/runlater/v1/schedule_service_pb.js";
export {
  DequeuedJobSchema,
  JobCheckpointSchema,
  JobFailureSchema,
  JobSuccessSchema,
  OutcomeSchema,
  WorkerService,
} from "./gen/runlater/v1/worker_service_pb.js";
export { InstanceSchema, WorkflowSchema, WorkflowService } from "./gen/runlater/v1/workflow_service_pb.js";
export { readTls, type TlsMaterial, type TlsOptions } from "./tls.js";
export type { OpenedTransport, TransportOptions } from "./transport.js";
export { openTransport } from "./transport.js";
