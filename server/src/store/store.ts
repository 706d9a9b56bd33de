/**
 * The store seam. @internal: this interface is not stable and not meant to be
 * implemented outside this repository; it changes as the in-tree stores evolve.
 *
 * Rules every store follows (pinned by the shared suite in server/test/storetest):
 * - Stores persist; they never decide. Every state change is one of the transitions in
 *   domain/transitions.ts, applied atomically per job.
 * - Batch first: each method takes many items and is one round trip / script / statement
 *   per shard where the backend allows it.
 * - Every write made because of partition ownership (claim, start, release) is
 *   conditional on the lease epoch; every write about a running job is conditional on
 *   its claim token, in the same atomic step as the write.
 * - Methods that depend on time take `now` (epoch ms) from the caller's clock.
 * - Claim tokens are at most 64 bytes (stores keep them in a fixed-width slot so a
 *   hand-out rewrites a job in place); the broker's are 16 characters.
 * - Ordering keys: of a partition's non-terminal jobs sharing a non-empty orderingKey,
 *   only the first in the store's enqueue order (the head) is pending, buffered or
 *   running; the others are "waiting" and invisible to claim, peek and jobNextDueAt.
 *   Whatever ends the head (complete, fail, claim expiry to failed, delete) promotes the
 *   next one in the same atomic step. Jobs without a key pay nothing for this.
 */
import type { JobFilter, ScanCursor } from "../domain/job-filter.js";
import type { AckOutcome, JobRecord, NewJob, Outcome } from "../domain/job-record.js";
import type { QueueConfig } from "../domain/queue-config.js";
import type { Schedule } from "../domain/schedule.js";
import type { TokenRecord } from "../domain/tokens.js";
import type { CheckpointInput, FailureInput, HandOutPlan } from "../domain/transitions.js";
import type { WorkflowDef } from "../domain/workflow-definition.js";
import type { InstanceState, WorkflowInstance } from "../domain/workflow-transitions.js";

export interface QueueRecord {
  name: string;
  config: QueueConfig;
  createdAt: number;
}

export interface QueueStatsRecord {
  pending: number;
  scheduled: number;
  running: number;
  succeeded: number;
  failed: number;
  /** now − run_after of the oldest due pending job; 0 when none is due. */
  oldestPendingAgeMs: number;
}

export interface OutcomeResult {
  outcome: Outcome;
  /** Set when the job went (back) to pending: when it becomes due. */
  pendingAt?: number;
  /**
   * Set when the job ended (succeeded, failed) and so made the next job of its ordering
   * key claimable: that job's run_after (it is in the same partition).
   */
  promotedAt?: number;
}

/** The result of one item of an ACK (jobCompleteMany, jobFailMany). */
export interface AckResultRecord extends Omit<OutcomeResult, "outcome"> {
  outcome: AckOutcome;
  /** With outcome "workflow": the job's stored workflow context (JobRecord.workflow). */
  workflow?: string;
}

/** A workflow version as stored. */
export interface StoredWorkflow {
  def: WorkflowDef;
  createdAt: number;
}

/** The ACK of a workflow job's run, applied in the same step as its instance's transition. */
export type WorkflowAck =
  | { kind: "complete"; id: string; claimToken: string; customStatus: string }
  | ({ kind: "fail"; id: string; claimToken: string } & FailureInput);

/**
 * Workflows (docs/workflows.md), for stores that keep them (Store.workflows). Definitions
 * are kept by name and version; an instance is one record with its revision, and every
 * change to it goes through instanceApply, atomically with the queue jobs it enqueues and
 * cancels and, for a run's outcome, with the ACK of that run's queue job.
 */
export interface WorkflowStore {
  /** Inserts a version; false (nothing written) if that name and version exist. */
  workflowInsert(p: { def: WorkflowDef; now: number }): Promise<boolean>;
  /** A version of a workflow (the latest when `version` is absent). */
  workflowGet(p: { name: string; version?: number }): Promise<StoredWorkflow | undefined>;
  /** The latest version of every workflow, by name. */
  workflowList(): Promise<StoredWorkflow[]>;
  /** Inserts an instance and the queue jobs of its first runs; false (nothing written) if the id exists. */
  instanceInsert(p: { instance: WorkflowInstance; jobs: NewJob[]; now: number }): Promise<boolean>;
  instanceGet(p: { id: string }): Promise<WorkflowInstance | undefined>;
  /** Instances, newest first (created_at, then id, descending), after the cursor. */
  instanceList(p: {
    workflow?: string;
    state?: InstanceState;
    limit: number;
    after?: { createdAt: number; id: string };
  }): Promise<WorkflowInstance[]>;
  /**
   * In one atomic step: if `ack` is given, its job must hold that claim token and be a
   * workflow job (else nothing is written: `ack` says stale_claim or not_found); the stored
   * instance must be at revision `rev` (else nothing is written: applied false, a conflict
   * the caller decides again); then the ACK's transition on its job, the instance replaced
   * by `instance`, `jobs` inserted, and the jobs named in `cancel` deleted if they are not
   * running or finished. With `rev` 0 and no `instance`, the instance must not exist (it
   * was deleted after its retention): the ACK alone is applied.
   */
  instanceApply(p: {
    id: string;
    rev: number;
    instance?: WorkflowInstance;
    jobs: NewJob[];
    cancel: string[];
    ack?: WorkflowAck;
    now: number;
  }): Promise<{ applied: boolean; ack?: OutcomeResult }>;
  /** Deletes ended instances that ended before `endedBefore`, oldest first (across every shard). */
  instanceDeleteEnded(p: { endedBefore: number; limit: number }): Promise<number>;
  /**
   * For a store of several shards, which keeps an instance and the queue jobs of its runs
   * on one (store/instance-placement.ts): the partitions of each queue named that the
   * instance's queue jobs may use, those on its shard (for an instance not stored yet, on
   * the shard instanceInsert will put it on). failed_precondition when no shard holds a
   * partition of every queue, or the instance's shard holds none of one of them. Absent,
   * or undefined: any partition.
   */
  instancePartitions?(p: { id: string; queues: string[] }): Promise<Map<string, number[]> | undefined>;
}

/** What a schedule's fire starts: an instance with the queue jobs of its first runs, or a plain job. */
export type FireStart = { instance: WorkflowInstance; jobs: NewJob[] } | { job: NewJob };

/**
 * Schedules (docs/workflows.md#schedules), for stores that keep them (Store.schedules). A
 * schedule is one record, by name, with its revision: every change is written only over
 * the revision it was decided on, and a fire is recorded in the same atomic step as what
 * it starts (scheduleFire). Stores index nextFireAt (0: never due) for scheduleDue; the
 * domain (schedule-transitions.ts) decides every field.
 */
export interface ScheduleStore {
  /**
   * Inserts a schedule, unless one of its name exists ("exists") or `max` schedules exist
   * already ("full"). On a store of several shards "exists" may also answer a name another
   * create has claimed and not yet inserted (schedule-names.ts): nothing to read yet; an
   * insert again takes that claim over if its create is gone.
   */
  scheduleInsert(p: { schedule: Schedule; max: number }): Promise<"inserted" | "exists" | "full">;
  scheduleGet(p: { name: string }): Promise<Schedule | undefined>;
  /** Schedules by name (ascending), strictly after `after`. */
  scheduleList(p: { limit: number; after?: string }): Promise<Schedule[]>;
  /** Replaces the schedule if the stored one is at revision `rev`; false (nothing written) otherwise, or if it is gone. */
  scheduleReplace(p: { schedule: Schedule; rev: number }): Promise<boolean>;
  scheduleDelete(p: { name: string }): Promise<boolean>;
  /**
   * Up to `limit` schedules due at `now` (0 < nextFireAt ≤ now), earliest nextFireAt first
   * (ties by name), and the earliest nextFireAt after `now` (when to look again), if any.
   */
  scheduleDue(p: { now: number; limit: number }): Promise<{ due: Schedule[]; nextDueAt?: number }>;
  /**
   * A fire, in one atomic step: the stored schedule must be at revision `rev` (else nothing
   * is written: applied false, a conflict the caller decides again); it is replaced by
   * `schedule`; `start` is inserted unless a record with its id (the instance's, or the
   * job's) exists already (then nothing of it is written and `existed` is true: an earlier
   * try of this fire started it); the jobs named in `cancel` are deleted if no worker holds
   * them and they have not ended. A store of several shards keeps `start` on the schedule's
   * shard (schedulePartitions), so this stays one step there too.
   */
  scheduleFire(p: {
    rev: number;
    schedule: Schedule;
    start?: FireStart;
    cancel: string[];
    now: number;
  }): Promise<{ applied: boolean; existed: boolean }>;
  /**
   * For a store of several shards, which keeps a schedule beside what its fires start (on
   * the shard of its target's queues, store/instance-placement.ts): the partitions of each
   * queue named on the schedule's shard, for what a fire starts. failed_precondition when
   * the schedule's shard holds no partition of one of them. Absent, or undefined: any partition.
   */
  schedulePartitions?(p: { name: string; queues: string[] }): Promise<Map<string, number[]> | undefined>;
}

export interface Lease {
  queue: string;
  partition: number;
  owner: string;
  epoch: number;
  expiresAt: number;
}

/** A live broker as the registry knows it (see docs/cluster.md). */
export interface BrokerEntry {
  /** Unique per process run; also the owner name in its leases. */
  id: string;
  /** Where other nodes reach it (forwarded Dequeue, notifications). */
  url: string;
  expiresAt: number;
}

/**
 * What a claim hands out at once (Store.jobClaimMany's `start`): the hand-out plan of a job
 * on its first attempt, and how much may go out in one answer.
 */
export interface ClaimStart {
  claimToken: string;
  claimExpiresAt: number;
  /** The delay before a second attempt, should the first fail without saying (retryDelayMs(policy, 1)). */
  retryDelayMs: number;
  /** Jobs handed out at most. */
  max: number;
  /** Their body bytes at most (the first whatever its size: domain/byte-budget.ts). */
  maxBytes: number;
}

export interface Store {
  readonly name: string;
  /**
   * The broker's default buffer per partition on this store (`--buffer-size`), in jobs; a
   * refill claims up to a quarter of it. What a claim costs decides it: on MySQL mostly per
   * call (several round trips), so bigger claims are cheaper per job; on
   * Redis per job inside a script that holds Redis while it runs, so smaller ones keep
   * every other call's latency down.
   */
  readonly defaultBufferSize: number;
  /** Present when the store keeps workflows (docs/workflows.md). */
  readonly workflows?: WorkflowStore;
  /** Present when the store keeps schedules (docs/workflows.md#schedules). */
  readonly schedules?: ScheduleStore;

  // Broker registry (shard 0): who is alive, and where.
  /** Registers or refreshes `id` until now + ttlMs. */
  brokerHeartbeat(p: { id: string; url: string; ttlMs: number; now: number }): Promise<void>;
  /** Brokers whose registration has not expired at `now`, by id. */
  brokerList(p: { now: number }): Promise<BrokerEntry[]>;
  /** Removes `id` at once (graceful shutdown), so others take its partitions without waiting for expiry. */
  brokerLeave(p: { id: string }): Promise<void>;

  // API tokens (shard 0): records by id; a secret is kept only as its hash (domain/tokens.ts).
  /** Inserts a token; false (nothing written) if its id exists. */
  tokenInsert(p: { token: TokenRecord }): Promise<boolean>;
  tokenGet(p: { id: string }): Promise<TokenRecord | undefined>;
  /** Every token, by id. */
  tokenList(): Promise<TokenRecord[]>;
  /** Deletes a token (revocation); false if there was none. */
  tokenDelete(p: { id: string }): Promise<boolean>;

  // Leases (partition ownership with fencing epochs).
  /** Takes or renews the lease if free, expired, or already `owner`'s; a new owner gets a higher epoch. */
  leaseAcquire(p: {
    queue: string;
    partition: number;
    owner: string;
    ttlMs: number;
    now: number;
  }): Promise<Lease | undefined>;
  leaseRelease(p: { queue: string; partition: number; owner: string; epoch: number }): Promise<void>;

  // Jobs.
  /**
   * Applies expireClaim to up to `limit` running jobs whose claim has expired; returns them
   * (after the change) and when to look again: the next claim deadline still ahead, or, for a
   * store that keeps a coarser schedule (MySQL's claim checks, docs/mysql.md), a time that
   * may find nothing to expire and may be up to 100 ms past that deadline.
   */
  jobClaimExpire(p: { now: number; limit: number }): Promise<{ expired: JobRecord[]; nextExpiryAt?: number }>;
  /**
   * Moves up to `limit` due pending jobs to buffered under `epoch`, best first; nothing if `epoch` is not the lease's.
   * With `maxBytes`, stops before the job whose body would take the claimed bodies past it, but
   * always claims the first (one big body must not stall its partition): the broker's memory bound.
   * A store may keep the buffered state in the memory of the store object that claimed (MySQL:
   * its claim writes nothing); then only that object sees the jobs as buffered (elsewhere they
   * read as pending, which is what users see anyway), and the start and release of what it
   * claimed must go through it, as the broker's do.
   * With `start`, the claim also hands out its leading jobs on their first attempt, as
   * jobStartMany would (store/claim-start.ts says which): those come back running, the rest
   * buffered. Redis does both in one script (one round trip between an enqueue and its
   * hand-out fewer); the other stores claim, then start (DelegatingStore).
   */
  jobClaimMany(p: {
    queue: string;
    partition: number;
    epoch: number;
    limit: number;
    maxBytes?: number;
    now: number;
    start?: ClaimStart;
  }): Promise<JobRecord[]>;
  jobCheckpointMany(p: {
    items: Array<CheckpointInput & { id: string; claimToken: string }>;
    now: number;
  }): Promise<OutcomeResult[]>;
  jobCompleteMany(p: {
    items: Array<{ id: string; claimToken: string; customStatus: string }>;
    now: number;
  }): Promise<AckResultRecord[]>;
  jobCount(p: { queue: string; filter: JobFilter; now: number }): Promise<number>;
  /** Deletes finished jobs of `queue` whose retention has passed, oldest first. */
  jobDeleteFinished(p: {
    queue: string;
    succeededBefore: number;
    failedBefore: number;
    limit: number;
  }): Promise<number>;
  jobDeleteMany(p: { queue: string; filter: JobFilter; limit: number; now: number }): Promise<number>;
  jobFailMany(p: {
    items: Array<FailureInput & { id: string; claimToken: string }>;
    now: number;
  }): Promise<AckResultRecord[]>;
  /** Looks jobs up by id; undefined where absent. With `bodies` false every body is empty (not read) and `bodySize` says its length. */
  jobGetMany(p: { ids: string[]; bodies?: boolean }): Promise<Array<JobRecord | undefined>>;
  /**
   * Inserts jobs; a job whose idempotency key is already live in its queue is not inserted and the live job's id is returned instead.
   * A job whose ordering key has a non-terminal job (or an earlier job of the batch) is inserted waiting, behind it.
   */
  jobInsertMany(p: { jobs: NewJob[]; now: number }): Promise<string[]>;
  /** Earliest run_after of the partition's pending jobs (due or not), or undefined if none. */
  jobNextDueAt(p: { queue: string; partition: number }): Promise<number | undefined>;
  /** Due pending (and buffered) jobs, best first, changing nothing: the dry run. */
  jobPeekMany(p: { queue: string; limit: number; now: number }): Promise<JobRecord[]>;
  /** Moves buffered jobs back to pending: the given ids under `epoch`, or with no ids every job buffered under an epoch < `belowEpoch`. */
  jobReleaseBuffered(p: {
    queue: string;
    partition: number;
    epoch?: number;
    ids?: string[];
    belowEpoch?: number;
  }): Promise<number>;
  /** Failed jobs get fresh attempts; one with an ordering key rejoins its key's sequence at the tail (waiting if the key is busy). */
  jobRetryFailed(p: {
    queue: string;
    priority?: number;
    attemptsAllowed: number;
    runAfter: number;
    limit: number;
    now: number;
  }): Promise<number>;
  /**
   * Newest run_after first, ties by id descending; strictly after `cursor`. With `bodies`
   * false every record's body is empty and `bodySize` says its length: the store does not
   * send them (a body regex still filters on them).
   */
  jobScan(p: {
    queue: string;
    filter: JobFilter;
    limit: number;
    cursor?: ScanCursor;
    bodies?: boolean;
    now: number;
  }): Promise<JobRecord[]>;
  /**
   * Buffered jobs under `epoch` (the lease's) become running per their plan (transitions.handOut).
   * Returns the ids started, in plan order; a job no longer buffered under `epoch` is skipped.
   * The broker applies handOut to its own buffered copy, so no job comes back over the wire.
   */
  jobStartMany(p: {
    queue: string;
    partition: number;
    epoch: number;
    plans: HandOutPlan[];
    now: number;
  }): Promise<string[]>;

  // Queues.
  queueCreate(p: { name: string; config: QueueConfig; now: number }): Promise<{ queue: QueueRecord; created: boolean }>;
  /** Deletes the queue and every job and key it has. */
  queueDelete(p: { name: string }): Promise<boolean>;
  queueGet(p: { name: string }): Promise<QueueRecord | undefined>;
  queueList(): Promise<QueueRecord[]>;
  queueStats(p: { name: string; now: number }): Promise<QueueStatsRecord>;
  queueUpdate(p: { name: string; config: QueueConfig }): Promise<QueueRecord | undefined>;

  close(): Promise<void>;
}
