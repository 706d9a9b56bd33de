/**
 * The driver protocol: one JSON object per line on the driver's stdin (a request) and
 * one per line on its stdout (the response), strictly in turn. conformance/protocol.md
 * is the prose version of these types; every driver (TS, Python, Java) implements it
 * through its SDK's public API and holds no assertions.
 *
 * Conventions: snake_case keys; times are epoch milliseconds (numbers); durations are
 * milliseconds; bodies are standard base64 (`body_b64`); enums are their short names
 * (`PENDING`, `ACKNOWLEDGED`); unset values are omitted or null.
 */

/** Wire protocols a driver may be asked to use. */
export type WireProtocol = "connect-json" | "connect-binary" | "grpc" | "grpc-web";

export interface QueueConfigJson {
  priorities?: number;
  claim_timeout_ms?: number;
  retry_policy?: { initial_delay_ms?: number; linear_steps?: number; max_delay_ms?: number };
  default_attempts_allowed?: number;
  max_dequeue_per_second?: number;
  paused?: boolean;
  succeeded_retention_ms?: number;
  failed_retention_ms?: number;
  fifo?: boolean;
  partitions?: number;
  max_body_bytes?: number;
}

export interface JobSpecJson {
  queue: string;
  body_b64: string;
  priority?: number;
  run_after_ms?: number;
  attempts_allowed?: number;
  idempotency_key?: string;
  custom_status?: string;
  ordering_key?: string;
}

export interface SuccessJson {
  job_id: string;
  claim_token: string;
  custom_status?: string;
}

export interface FailureJson {
  job_id: string;
  claim_token: string;
  custom_status?: string;
  retry_delay_ms?: number;
  no_retry?: boolean;
}

export interface CheckpointJson {
  job_id: string;
  claim_token: string;
  extend_claim_by_ms?: number;
  new_body_b64?: string;
  move_to_pending?: boolean;
  run_after_ms?: number;
  attempts_allowed?: number;
  custom_status?: string;
}

export type JobStateName = "PENDING" | "RUNNING" | "SUCCEEDED" | "FAILED";

interface Filter {
  queue: string;
  state?: JobStateName;
  priority?: number;
  body_regex?: string;
}

/**
 * What a scripted handler does with a job: the job's body is one of these, as JSON (the
 * worker layer; a body that is not an action succeeds with no custom status).
 *
 *   {"return": "s"}                            success, custom status "s" ("" for none)
 *   {"return": "s", "result_b64": "…",         the same with a workflow output: the result
 *    "no_events": true}                        payload, and/or no events posted downstream
 *   {"raise": "m"}                             throw/raise a plain error with message "m"
 *   {"retry_after_ms": N, "message": "m"}      throw/raise RetryAfter(N ms, "m")
 *   {"do_not_retry": "m"}                      throw/raise DoNotRetry("m")
 *   {"snooze_ms": N, "status": "s"}            return Snooze(N ms, "s")
 *   {"wait": "g", "do": action}                block until gate "g" opens (worker_release),
 *                                              or the worker gives the job up, then do `do`
 *   {"attempts": [action, ...]}                attempt n does attempts[min(n, length) - 1]
 *   {"runs": [action, ...]}                    workflow run n does runs[min(n, length) - 1]
 */
export type HandlerAction =
  | { return: string; result_b64?: string; no_events?: boolean }
  | { raise: string }
  | { retry_after_ms: number; message?: string }
  | { do_not_retry: string }
  | { snooze_ms: number; status?: string }
  | { wait: string; do: HandlerAction }
  | { attempts: HandlerAction[] }
  | { runs: HandlerAction[] };

// ---- workflows and schedules (docs/workflows.md)

/** An input of a workflow job: an upstream job (seeded or not) or an external input. */
export type WorkflowInputJson = { job: string; seed?: boolean } | { external: string };

export interface WorkflowJobJson {
  name: string;
  queue: string;
  inputs?: WorkflowInputJson[];
  on_failure?: "ABORT" | "CONTINUE";
  body_b64?: string;
  priority?: number;
  attempts_allowed?: number;
}

/** apply_workflow's definition; results carry `version` and the jobs as defined. */
export interface WorkflowJson {
  name: string;
  version?: number;
  jobs: WorkflowJobJson[];
}

export interface ExternalEventJson {
  input: string;
  custom_status?: string;
  result_b64?: string;
}

/** An event in an input: a run's output or an external payload. */
export interface WorkflowEventJson {
  event_id: string;
  /** "job:<name>" or "external:<name>". */
  input: string;
  from_job: string;
  from_run: number;
  custom_status: string;
  result_b64: string;
  posted_at_ms: number | null;
}

export interface JobRunJson {
  run: number;
  job_id: string;
  triggered_by: WorkflowEventJson[];
  outcome: "QUEUED" | "SUCCEEDED" | "FAILED" | "ABANDONED";
  custom_status: string;
  result_b64: string;
  queued_at_ms: number | null;
  ended_at_ms: number | null;
}

export interface InstanceJobJson {
  name: string;
  state: "WAITING" | "RUNNABLE" | "RUNNING" | "DISABLED";
  pending_events: WorkflowEventJson[];
  runs: JobRunJson[];
  run_count: number;
  dropped_events: number;
}

export interface InstanceJson {
  instance_id: string;
  workflow: string;
  version: number;
  state: "RUNNING" | "SUCCEEDED" | "FAILED" | "ABORTED" | "CANCELLED";
  keep_open: boolean;
  created_at_ms: number | null;
  ended_at_ms: number | null;
  jobs: InstanceJobJson[];
}

/** What a worker's handler saw of a workflow job's run (HandlerCallJson.workflow). */
export interface WorkflowContextJson {
  workflow: string;
  version: number;
  instance_id: string;
  job: string;
  run: number;
  triggered_by: WorkflowEventJson[];
}

/** create_schedule's schedule: exactly one of workflow and job. */
export interface ScheduleSpecJson {
  name: string;
  cron: string;
  time_zone?: string;
  workflow?: { workflow: string; events?: ExternalEventJson[]; keep_open?: boolean };
  job?: { queue: string; body_b64?: string; priority?: number; attempts_allowed?: number };
  overlap?: "SKIP" | "ALLOW" | "CANCEL_PREVIOUS";
  catch_up?: "NONE" | "LATEST";
  catch_up_window_ms?: number;
}

export interface ScheduleFireJson {
  outcome: "STARTED" | "SKIPPED" | "MISSED" | "FAILED";
  at_ms: number | null;
  through_ms: number | null;
  fired_at_ms: number | null;
  started: string;
  previous: string;
  error: string;
}

export interface ScheduleJson {
  name: string;
  cron: string;
  overlap: "SKIP" | "ALLOW" | "CANCEL_PREVIOUS";
  paused: boolean;
  next_fire_at_ms: number | null;
  last_started: string;
  fires: number;
  /** Oldest first, as the server keeps it. */
  history: ScheduleFireJson[];
}

/** Worker options a scenario may set; the rest take the SDK's defaults. */
export interface WorkerOptionsJson {
  concurrency?: number;
  batch_size?: number;
  dequeue_mode?: "stream" | "poll";
  poll_wait_ms?: number;
  shutdown_grace_ms?: number;
  ack_delay_ms?: number;
}

/** Every request carries `op`; SDK operations also name the `actor` (one client per actor). */
export type DriverRequest =
  /**
   * Forget every client and worker; from now on talk to `url` with `protocol`. Workers
   * connect to `worker_url` (default `url`): the runner's proxy, whose connections it can
   * break. In a secure run (`https://` URLs) every client and worker sends `token` and
   * trusts the CA in the PEM file `tls_ca`.
   */
  | {
      op: "connect";
      url: string;
      protocol: WireProtocol;
      worker_url?: string;
      /** An API token every client and worker sends (the server runs with auth). */
      token?: string;
      /** Path of a PEM CA file to trust for the server's certificate. */
      tls_ca?: string;
    }
  /**
   * Before every scenario: stop every worker at once (open every gate first, so blocked
   * handlers end), forget gates and handler calls.
   */
  | { op: "reset" }
  /** The server's clock (manual, epoch ms): the workers' clock reads this from now on. */
  | { op: "clock"; now_ms: number }
  | { op: "shutdown" }
  | ({ actor: string } & SdkRequest);

export type SdkRequest =
  | { op: "create_queue"; queue: string; config?: QueueConfigJson }
  | { op: "update_queue"; queue: string; config: QueueConfigJson }
  | { op: "delete_queue"; queue: string }
  | { op: "get_queue"; queue: string }
  | { op: "list_queues" }
  | { op: "enqueue"; jobs: JobSpecJson[] }
  | { op: "get_jobs"; job_ids: string[]; include_body?: boolean }
  | ({ op: "scan_jobs"; future?: boolean; limit?: number; page_token?: string; include_body?: boolean } & Filter)
  | ({ op: "count_jobs"; future?: boolean } & Filter)
  | {
      op: "retry_failed_jobs";
      queue: string;
      priority?: number;
      attempts_allowed?: number;
      run_after_ms?: number;
      limit?: number;
    }
  | ({ op: "delete_jobs"; state: JobStateName; limit?: number } & Filter)
  | {
      op: "dequeue";
      queue: string;
      limit?: number;
      dry_run?: boolean;
      succeeded?: SuccessJson[];
      failed?: FailureJson[];
    }
  | { op: "ack"; queue: string; succeeded?: SuccessJson[]; failed?: FailureJson[] }
  | { op: "checkpoint"; queue: string; checkpoints: CheckpointJson[] }
  // ---- the worker layer: the actor names a Worker of the SDK, running the scripted handler
  /** Start a Worker on `queue` (its start-up check included); fails as the SDK's start fails. */
  | { op: "worker_start"; queue: string; options?: WorkerOptionsJson }
  /** Stop it gracefully; with wait (default true) answer once it has stopped. */
  | { op: "worker_stop"; wait?: boolean }
  /**
   * Wait (at most 20 s) until at least `calls` handler calls have started, `finished` have
   * returned, and (if `stopped`) the worker has stopped; then answer what was seen.
   */
  | { op: "worker_await"; calls?: number; finished?: number; stopped?: boolean }
  /** Open gate `gate`: handlers waiting on it go on (it stays open until reset). */
  | { op: "worker_release"; gate: string }
  /** The settings of a Worker made with no options (not started). */
  | { op: "worker_defaults" }
  // ---- workflows and schedules, through the SDK's workflow helpers
  | { op: "apply_workflow"; workflow: WorkflowJson }
  | { op: "start_instance"; workflow: string; events?: ExternalEventJson[]; keep_open?: boolean }
  | { op: "post_event"; instance_id: string; event: ExternalEventJson }
  | { op: "get_instance"; instance_id: string }
  /** The SDK's waitForInstance: polls until the instance ends; its timeout error otherwise. */
  | { op: "wait_instance"; instance_id: string; timeout_ms: number }
  | { op: "rerun_job"; instance_id: string; job: string; run: number }
  | { op: "disable_job"; instance_id: string; job: string }
  | { op: "enable_job"; instance_id: string; job: string }
  | { op: "close_instance"; instance_id: string }
  | { op: "cancel_instance"; instance_id: string }
  | { op: "create_schedule"; schedule: ScheduleSpecJson; paused?: boolean }
  | { op: "get_schedule"; name: string };

export type SdkOp = SdkRequest["op"];

export const sdkOps: readonly SdkOp[] = [
  "create_queue",
  "update_queue",
  "delete_queue",
  "get_queue",
  "list_queues",
  "enqueue",
  "get_jobs",
  "scan_jobs",
  "count_jobs",
  "retry_failed_jobs",
  "delete_jobs",
  "dequeue",
  "ack",
  "checkpoint",
  "worker_start",
  "worker_stop",
  "worker_await",
  "worker_release",
  "worker_defaults",
  "apply_workflow",
  "start_instance",
  "post_event",
  "get_instance",
  "wait_instance",
  "rerun_job",
  "disable_job",
  "enable_job",
  "close_instance",
  "cancel_instance",
  "create_schedule",
  "get_schedule",
];

/** One handler call a worker made: the job, its attempt, and whether the handler has returned. */
export interface HandlerCallJson {
  job_id: string;
  attempt: number;
  body_b64: string;
  finished: boolean;
  /** The run's workflow context; null for a job that is not a workflow job's run. */
  workflow: WorkflowContextJson | null;
}

export interface QueueJson {
  name: string;
  config: Required<Omit<QueueConfigJson, "retry_policy">> & {
    retry_policy: Required<NonNullable<QueueConfigJson["retry_policy"]>>;
  };
  stats: { pending: number; scheduled: number; running: number; succeeded: number; failed: number };
}

export interface JobJson {
  job_id: string;
  queue: string;
  state: JobStateName;
  priority: number;
  body_b64: string;
  run_after_ms: number | null;
  attempts_allowed: number;
  attempts_remaining: number;
  custom_status: string;
  created_at_ms: number | null;
  updated_at_ms: number | null;
  claim_expires_at_ms: number | null;
  finished_at_ms: number | null;
  ordering_key: string;
}

export interface DequeuedJobJson {
  job_id: string;
  body_b64: string;
  priority: number;
  attempt: number;
  attempts_allowed: number;
  claim_token: string;
  claim_expires_at_ms: number | null;
  created_at_ms: number | null;
  custom_status: string;
}

export interface OutcomeJson {
  job_id: string;
  outcome: "ACKNOWLEDGED" | "STALE_CLAIM" | "NOT_FOUND";
}

/** The error half of a response: `code` is the Connect code name (`not_found`). */
export interface ErrorJson {
  code: string;
  /** ErrorInfo reason without its prefix (`QUEUE_NOT_FOUND`); absent when none was sent. */
  reason?: string;
  field?: string;
  message?: string;
}

/** What each op returns on success (besides `ok: true`). */
export interface ResultByOp {
  connect: Record<string, never>;
  reset: Record<string, never>;
  clock: Record<string, never>;
  shutdown: Record<string, never>;
  create_queue: { created: boolean; queue: QueueJson };
  update_queue: { queue: QueueJson };
  delete_queue: { deleted: boolean };
  get_queue: { queue: QueueJson };
  list_queues: { queues: QueueJson[] };
  enqueue: { job_ids: string[] };
  get_jobs: { jobs: JobJson[] };
  scan_jobs: { jobs: JobJson[]; next_page_token: string };
  count_jobs: { count: number };
  retry_failed_jobs: { count: number };
  delete_jobs: { count: number };
  dequeue: { jobs: DequeuedJobJson[]; ack_results: OutcomeJson[] };
  ack: { results: OutcomeJson[] };
  checkpoint: { results: OutcomeJson[] };
  worker_start: Record<string, never>;
  worker_stop: Record<string, never>;
  worker_await: { calls: HandlerCallJson[]; stopped: boolean };
  worker_release: Record<string, never>;
  worker_defaults: Required<WorkerOptionsJson>;
  apply_workflow: { created: boolean; workflow: WorkflowJson };
  start_instance: { instance: InstanceJson };
  post_event: { instance: InstanceJson };
  get_instance: { instance: InstanceJson };
  wait_instance: { instance: InstanceJson };
  rerun_job: { instance: InstanceJson };
  disable_job: { instance: InstanceJson };
  enable_job: { instance: InstanceJson };
  close_instance: { instance: InstanceJson };
  cancel_instance: { instance: InstanceJson };
  create_schedule: { created: boolean; schedule: ScheduleJson };
  get_schedule: { schedule: ScheduleJson };
}

export type DriverResponse = ({ ok: true } & Record<string, unknown>) | { ok: false; error: ErrorJson };
