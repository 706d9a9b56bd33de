const DAY_MS = 86_400_000;

/** Hard limits enforced at the edge. Documented in docs/configuration.md (values) and docs/limits.md (what a client gets). */
export const limits = {
  queueNameMaxLength: 64,
  enqueueBatchMax: 1000,
  dequeueLimitMax: 1000,
  /**
   * Body bytes in one Dequeue answer (it carries at least one job, whatever its size): with
   * the jobs' other fields, an answer of up to dequeueLimitMax jobs stays under the 4 MiB
   * that gRPC clients accept by default.
   */
  dequeueBodyBytesMax: 3 * 1024 * 1024,
  /**
   * Body bytes in one GetJobs or ScanJobs answer that includes bodies (at least one job,
   * whatever its size): a page is cut short there, a lookup asking for more is refused.
   * Below the SDK clients' 64 MiB message limit, and a bound on the server's memory per call.
   */
  answerBodyBytesMax: 48 * 1024 * 1024,
  ackBatchMax: 10_000,
  checkpointBatchMax: 1000,
  getJobsMax: 1000,
  scanLimitDefault: 100,
  scanLimitMax: 1000,
  bulkLimitDefault: 1000,
  bulkLimitMax: 100_000,
  idempotencyKeyMaxLength: 128,
  /** In characters (code points), as the MySQL column counts them. */
  orderingKeyMaxLength: 128,
  customStatusMaxLength: 1000,
  /** A job's W3C traceparent (domain/trace-context.ts): version 00 is exactly this long. */
  traceparentLength: 55,
  bodyRegexMaxLength: 256,
  dequeueWaitMaxMs: 60_000,
  /** Credits granted on a DequeueStream and not yet used (jobs the server may push unasked). */
  streamCreditMax: 10_000,
  prioritiesMax: 10,
  partitionsMax: 256,
  /** Queues a store holds unless `runlater serve --max-queues` says otherwise (engine/queue-quota.ts). */
  queuesMaxDefault: 10_000,
  /** The largest --max-queues. */
  queuesMaxLimit: 1_000_000,
  attemptsMax: 1000,
  claimTimeoutMinMs: 100,
  /** Longest claim: a queue's claim_timeout and a checkpoint's extend_claim_by. */
  claimTimeoutMaxMs: 7 * DAY_MS,
  /** Longest retry delay: an ACK's retry_delay and a retry policy's delays. */
  retryDelayMaxMs: 365 * DAY_MS,
  /** How far ahead of now a run_after may be (enqueue, checkpoint, retry of failed jobs). */
  runAfterAheadMaxMs: 10 * 365 * DAY_MS,
  /** Longest retention of finished jobs (succeeded_retention, failed_retention). */
  retentionMaxMs: 10 * 365 * DAY_MS,
  maxBodyBytesMax: 16 * 1024 * 1024,
  /** API tokens (docs/security.md): a token's name, its queue patterns, and how many a store keeps. */
  tokenNameMaxLength: 100,
  tokenQueuePatternsMax: 20,
  tokensMax: 1000,
  /** Workflow and external input names, job names of a workflow. */
  workflowNameMaxLength: 64,
  workflowJobsMax: 100,
  workflowInputsMax: 10,
  /** The result payload a workflow job's handler may return (it travels in every event it posts). */
  workflowResultBytesMax: 4096,
  /** Events an input holds unconsumed; one more drops the oldest (counted as dropped). */
  workflowEventsPerInputMax: 20,
  /** Runs kept in an instance's history per job (older ones are forgotten; their queue jobs remain until retention). */
  workflowRunsKept: 20,
  /** Runs of one job in one instance: a cycle that never stops ends there. */
  workflowRunsPerJobMax: 10_000,
  /**
   * An instance's size as stored (its JSON, about), past which its history is trimmed:
   * first the results of the oldest ended runs' triggering events, then the oldest ended
   * runs. Every step writes the whole instance, so this bounds what one step encodes.
   */
  workflowInstanceBytesMax: 1024 * 1024,
  /** A schedule's cron expression, in characters. */
  scheduleCronMaxLength: 100,
  /** A schedule's IANA time zone name, in characters. */
  scheduleTimeZoneMaxLength: 64,
  /** Schedules one server (one store) keeps: the quota CreateSchedule enforces. */
  schedulesMax: 1000,
  /** External events a schedule posts to each instance it starts. */
  scheduleEventsMax: 10,
  /**
   * How late a fire may be and still count as on time (a leader failover takes a few
   * seconds); later, the time counts as missed and only catch_up "latest" fires it.
   */
  scheduleOnTimeMs: 60_000,
  /** catch_up_window of catch_up "latest": default, least and most. */
  scheduleCatchUpWindowDefaultMs: 3_600_000,
  scheduleCatchUpWindowMinMs: 60_000,
  scheduleCatchUpWindowMaxMs: 7 * DAY_MS,
  /** Next fire times a GetSchedule answer lists: default and most. */
  scheduleUpcomingDefault: 5,
  scheduleUpcomingMax: 100,
  /** Fires kept in a schedule's history (older ones are forgotten). */
  scheduleHistoryKept: 10,
  /** Ended workflow instances are deleted this long after they end (serve --instance-retention). */
  instanceRetentionDefaultMs: 7 * DAY_MS,
  /** Claim tokens are stored in a fixed-width slot (Redis) or column (MySQL CHAR(64)); the broker's are 16 characters. */
  claimTokenMaxBytes: 64,
} as const;
