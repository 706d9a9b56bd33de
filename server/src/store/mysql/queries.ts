/**
 * The SQL of the MySQL store, one named constant per statement (functions where an IN
 * list's length varies: they only repeat `?`). docs/mysql.md shows the EXPLAIN of the
 * hot ones. Every value is a bound parameter.
 */
import { limits } from "../../domain/limits.js";
import { ALL_COLUMNS, INSERT_COLUMNS, INSERT_ROW, META_AND_SIZE, META_COLUMNS } from "./rows.js";
import { placeholders } from "./shard.js";

const list = placeholders;

// ---- queues (shard 0)

export const QUEUE_INSERT = "INSERT INTO queues (name, config, created_at) VALUES (?, ?, ?)";
export const QUEUE_SELECT = "SELECT name, config, created_at FROM queues WHERE name = ?";
export const QUEUE_SELECT_ALL = "SELECT name, config, created_at FROM queues ORDER BY name";
export const QUEUE_UPDATE = "UPDATE queues SET config = ? WHERE name = ?";
export const QUEUE_DELETE = "DELETE FROM queues WHERE name = ?";
// Placement (shard 0, migration 0004): a queue's shard per partition, "0,1,2".
export const PLACEMENT_UPSERT =
  "INSERT INTO queue_placement (name, shards) VALUES (?, ?) ON DUPLICATE KEY UPDATE shards = VALUES(shards)";
export const PLACEMENT_DELETE = "DELETE FROM queue_placement WHERE name = ?";
/** The placement of existing queues; `shards` is NULL for a queue created before placements were stored. */
export const queuePlacements = (n: number) =>
  `SELECT q.name, q.config, p.shards FROM queues q LEFT JOIN queue_placement p ON p.name = q.name WHERE q.name IN (${list(n)})`;
/** queueUpdate: the queue row locked, so concurrent growths of one queue append in turn. */
export const QUEUE_PLACEMENT_LOCK =
  "SELECT q.config, p.shards FROM queues q LEFT JOIN queue_placement p ON p.name = q.name WHERE q.name = ? FOR UPDATE";
/** Enqueue holds a shared lock on its queues' rows until it commits, so a concurrent DeleteQueue waits for it (and then deletes its jobs too). */
export const queuesLockShared = (n: number) => `SELECT name FROM queues WHERE name IN (${list(n)}) LOCK IN SHARE MODE`;

// ---- leases (on the partition's shard)

export const LEASE_LOCK = "SELECT owner, epoch, expires_at FROM leases WHERE queue = ? AND part = ? FOR UPDATE";
export const BROKER_UPSERT =
  "INSERT INTO brokers (id, url, expires_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE url = VALUES(url), expires_at = VALUES(expires_at)";
export const BROKER_LIVE = "SELECT id, url, expires_at FROM brokers WHERE expires_at > ? ORDER BY id";
/** Registrations dead for an hour: kept that long for debugging, then dropped. */
export const BROKER_PURGE_DEAD = "DELETE FROM brokers WHERE expires_at < ?";
export const BROKER_DELETE = "DELETE FROM brokers WHERE id = ?";
export const LEASE_INSERT = "INSERT INTO leases (queue, part, owner, epoch, expires_at) VALUES (?, ?, ?, ?, ?)";
export const LEASE_UPDATE = "UPDATE leases SET owner = ?, epoch = ?, expires_at = ? WHERE queue = ? AND part = ?";
/** A released lease keeps its row and epoch, so the next owner's epoch is higher still. */
export const LEASE_RELEASE =
  "UPDATE leases SET owner = '', expires_at = 0 WHERE queue = ? AND part = ? AND owner = ? AND epoch = ?";
export const LEASE_RELEASE_QUEUE = "UPDATE leases SET owner = '', expires_at = 0 WHERE queue = ?";
/** The epoch fence of claim and start: a shared lock, so a takeover (LEASE_UPDATE) waits until this transaction commits. */
export const LEASE_EPOCH_SHARED = "SELECT epoch FROM leases WHERE queue = ? AND part = ? LOCK IN SHARE MODE";

// ---- claiming (the lease owner only)

/**
 * Earliest run_after of the partition's pending jobs, per priority level: one MIN per
 * level, each answered by a single dive into jobs_claim ("Select tables optimized away"),
 * so the claim knows which levels have due jobs without scanning future ones.
 */
export const PENDING_LEVELS = Array.from(
  { length: limits.prioritiesMax },
  (_, i) =>
    `SELECT ${i + 1} AS priority, MIN(run_after) AS next_at FROM jobs WHERE queue = ? AND part = ? AND queued_state = 'pending' AND priority = ${i + 1}`,
).join(" UNION ALL ");

/** The lease's epoch without a lock: the claim writes nothing, so it needs no fence (the start has one), only to know the lease is still ours. */
export const LEASE_EPOCH = "SELECT epoch FROM leases WHERE queue = ? AND part = ?";

/** One priority level of a partition's pending jobs: one stretch of jobs_claim. */
const LEVEL = "queue = ? AND part = ? AND queued_state = 'pending' AND priority = ?";
/** After the claim's cursor (run_after, seq): two ranges of jobs_claim, read in order. */
const AFTER_CURSOR = " AND (run_after > ? OR (run_after = ? AND seq > ?))";

/**
 * Due jobs of one level in dequeue order, from its start or after the cursor: a range scan
 * of jobs_claim that stops after LIMIT rows. A plain read: the claim writes nothing (the
 * jobs it returns stay pending in the table; held-jobs.ts keeps them buffered in memory).
 */
const claimLevel = (columns: string, afterCursor: boolean) =>
  `SELECT ${columns} FROM jobs WHERE ${LEVEL} AND run_after <= ?${afterCursor ? AFTER_CURSOR : ""} ORDER BY run_after, seq LIMIT ?`;
/**
 * The claim's columns: whole rows (the broker buffers them, bodies included), or, for a
 * claim bounded in bytes, each body's size and the body itself only when it is at most the
 * first parameter (the bound's share per job asked for): the claim keeps the rows that fit
 * and reads the few larger bodies it kept afterwards (selectBodies), so what crosses the
 * wire stays within the bound, and a claim of small jobs is still one statement.
 */
const SIZED_COLUMNS = `${META_AND_SIZE}, IF(LENGTH(body) <= ?, body, NULL) AS body`;
export const claimRows = (sized: boolean, afterCursor: boolean) =>
  claimLevel(sized ? SIZED_COLUMNS : ALL_COLUMNS, afterCursor);
/** Up to the claim's cursor (run_after, seq), inclusive. */
const UP_TO_CURSOR = " AND (run_after < ? OR (run_after = ? AND seq <= ?))";
/**
 * Places (id, run_after, seq) of one level's rows in dequeue order: due ones up to the
 * cursor (a claim's rescan, looking for rows behind it that no claim took), or all of them
 * from the start or after the cursor (next due). Index-only: jobs_claim holds id as its
 * primary-key suffix.
 */
export const levelPlaces = (due: boolean, bound?: "after" | "upTo") =>
  `SELECT id, run_after, seq FROM jobs WHERE ${LEVEL}${due ? " AND run_after <= ?" : ""}` +
  `${bound === "after" ? AFTER_CURSOR : bound === "upTo" ? UP_TO_CURSOR : ""} ORDER BY run_after, seq LIMIT ?`;
/** A rescan's chosen rows, still pending, with the claim's columns. */
export const pendingRows = (sized: boolean, n: number) =>
  `SELECT ${sized ? SIZED_COLUMNS : ALL_COLUMNS} FROM jobs WHERE id IN (${list(n)}) AND state = 'pending'`;
export const selectBodies = (n: number) => `SELECT id, body FROM jobs WHERE id IN (${list(n)})`;

export const selectJobs = (n: number, bodies = true) =>
  `SELECT ${bodies ? ALL_COLUMNS : META_AND_SIZE} FROM jobs WHERE id IN (${list(n)})`;
export const selectJobsMetaLocked = (n: number) =>
  `SELECT ${META_COLUMNS} FROM jobs WHERE id IN (${list(n)}) FOR UPDATE`;
export const selectPendingLocked = (n: number) =>
  `SELECT ${META_COLUMNS} FROM jobs WHERE id IN (${list(n)}) AND state = 'pending' FOR UPDATE`;

/**
 * Start, fast path (the jobs are pending rows held in memory, see held-jobs.ts): every job
 * of the group gets the same hand-out values (the broker gives one claim token, expiry and
 * retry delay to a batch), and the attempt counters move in
 * SQL (transitions.handOut: attempt + 1, attempts_remaining - 1 but not below 0). The
 * lease row is joined by its epoch: a multi-table UPDATE reads it with a shared lock even
 * at READ COMMITTED, so this one statement is the epoch fence, and a takeover's
 * LEASE_UPDATE waits for it as it waits for LEASE_EPOCH_SHARED. Rows matched = rows started.
 */
export const startGroup = (set: string, n: number) =>
  `UPDATE jobs JOIN leases ON leases.queue = ? AND leases.part = ? AND leases.epoch = ? ` +
  `SET ${set}, attempt = attempt + 1, attempts_remaining = GREATEST(0, attempts_remaining - 1) ` +
  `WHERE jobs.id IN (${list(n)}) AND jobs.state = 'pending'`;

/**
 * ACK, fast path: jobs of one claim token without an ordering key (nothing to promote),
 * with a patch every one of them gets (succeed without a custom status), and no workflow
 * job's run among them (its ACK goes through Store.workflows, never this one). Rows
 * matched = rows acknowledged; the caller rolls back when that is not the whole group.
 */
export const ackGroup = (set: string, n: number) =>
  `UPDATE jobs SET ${set} WHERE id IN (${list(n)}) AND state = 'running' AND claim_token = ? AND ordering_key IS NULL AND workflow IS NULL`;

/** Rows marked buffered by an earlier runlater (its claim wrote the state), found by a new lease owner after an upgrade. */
export const releaseBufferedBelow = (set: string) =>
  `UPDATE jobs SET ${set} WHERE queue = ? AND part = ? AND queued_state = 'buffered' AND buffer_epoch < ? LIMIT ?`;

// ---- inserting

export const insertJobs = (rows: number) =>
  `INSERT INTO jobs (${INSERT_COLUMNS}) VALUES ${Array.from({ length: rows }, () => INSERT_ROW).join(", ")}`;
export const idempotencyLookup = (n: number) =>
  `SELECT idempotency_key, id FROM jobs WHERE queue = ? AND idempotency_key IN (${list(n)})`;
export const existingIds = (n: number) => `SELECT id FROM jobs WHERE id IN (${list(n)})`;

// ---- claim timeouts (any node; docs/mysql.md, "Claim checks")

/** Every write that gives running jobs a claim deadline adds one check per deadline. */
export const claimChecksInsert = (n: number) =>
  `INSERT INTO claim_checks (due_at, job_ids) VALUES ${Array.from({ length: n }, () => "(?, ?)").join(", ")}`;
/**
 * Due checks, oldest first: a range of claim_checks_due that stops at LIMIT. SKIP LOCKED, so
 * sweeps on several nodes take different checks and never wait for each other here. The
 * index is forced: when much of a small ledger is due the optimizer would rather read the
 * whole table and sort it, which a ledger that grew large (a backlog) would pay every round.
 */
export const CLAIM_CHECKS_DUE =
  "SELECT id, job_ids FROM claim_checks FORCE INDEX (claim_checks_due) WHERE due_at <= ? ORDER BY due_at LIMIT ? FOR UPDATE SKIP LOCKED";
/** A check's jobs that are still running past their deadline, locked (an ACK holding one is waited for: skipping it could lose its only check). */
export const expiredClaims = (n: number) =>
  `SELECT ${ALL_COLUMNS} FROM jobs WHERE id IN (${list(n)}) AND state = 'running' AND claim_expires_at <= ? FOR UPDATE`;
export const claimChecksDelete = (n: number) => `DELETE FROM claim_checks WHERE id IN (${list(n)})`;
/** A check split by the sweep's limit keeps the jobs it did not look at. */
export const CLAIM_CHECK_KEEP = "UPDATE claim_checks SET job_ids = ? WHERE id = ?";
/** The next check: the first entry of claim_checks_due (a lower bound of the next claim deadline). */
export const NEXT_CLAIM_CHECK = "SELECT MIN(due_at) AS next_at FROM claim_checks";

// ---- retention and bulk admin

/**
 * Finished jobs past retention, oldest first: an ordered range of jobs_finished that stops
 * at LIMIT. Selected first and then deleted by id (DELETE … ORDER BY … LIMIT would sort the
 * whole expired range on every chunk); the DELETE re-checks state and time.
 */
export const FINISHED_EXPIRED =
  "SELECT id FROM jobs WHERE queue = ? AND finished_state = ? AND finished_at < ? ORDER BY finished_at, seq LIMIT ?";
export const deleteFinishedIds = (n: number) =>
  `DELETE FROM jobs WHERE id IN (${list(n)}) AND state = ? AND finished_at < ?`;
/** Failed jobs to retry, oldest failure first (same index and reason as FINISHED_EXPIRED). */
export const failedOldest = (byPriority: boolean) =>
  `SELECT id, ordering_key FROM jobs WHERE queue = ? AND finished_state = 'failed'${byPriority ? " AND priority = ?" : ""} ORDER BY finished_at, seq LIMIT ?`;
export const retryFailedIds = (set: string, n: number) =>
  `UPDATE jobs SET ${set} WHERE id IN (${list(n)}) AND state = 'failed'`;
export const DELETE_QUEUE_JOBS = "DELETE FROM jobs WHERE queue = ? LIMIT ?";
export const DELETE_QUEUE_MEMBERS = "DELETE FROM ordering_members WHERE queue = ? LIMIT ?";
export const DELETE_QUEUE_KEYS = "DELETE FROM ordering_keys WHERE queue = ? LIMIT ?";
export const deleteIds = (n: number) => `DELETE FROM jobs WHERE id IN (${list(n)})`;

// ---- reads for users

/** Ids and what deciding a delete needs (whether the job may be the head of an ordering key). */
export const selectIdKeys = (where: string) => `SELECT id, state, ordering_key FROM jobs WHERE ${where} LIMIT ?`;
export const lockIdKeys = (n: number, where: string) =>
  `SELECT id, state, ordering_key FROM jobs WHERE id IN (${list(n)}) AND ${where} FOR UPDATE`;

// ---- ordering keys (ordering.ts; docs/mysql.md, "Ordering keys")

/** `(queue = ? AND part = ? AND ordering_key = ?) OR …`: one primary-key range per key. */
const keyRefs = (n: number, table = "") =>
  Array.from({ length: n }, () => `(${table}queue = ? AND ${table}part = ? AND ${table}ordering_key = ?)`).join(" OR ");

/**
 * Creates or locks each key's row and advances its counter: one VALUES row per job, so a
 * key named n times moves n positions (the rows after the first hit the duplicate key).
 */
export const orderingKeysReserve = (jobs: number) =>
  `INSERT INTO ordering_keys (queue, part, ordering_key, next_pos) VALUES ${Array.from({ length: jobs }, () => "(?, ?, ?, 1)").join(", ")} ` +
  "ON DUPLICATE KEY UPDATE next_pos = next_pos + 1";
export const orderingKeysSelect = (keys: number) =>
  `SELECT queue, part, ordering_key, next_pos FROM ordering_keys WHERE ${keyRefs(keys)}`;
export const orderingKeysLock = (keys: number) =>
  `SELECT queue, part, ordering_key FROM ordering_keys WHERE ${keyRefs(keys)} FOR UPDATE`;
export const orderingKeysDelete = (keys: number) => `DELETE FROM ordering_keys WHERE ${keyRefs(keys)}`;
export const orderingMembersInsert = (rows: number) =>
  `INSERT INTO ordering_members (queue, part, ordering_key, pos, job_id) VALUES ${Array.from({ length: rows }, () => "(?, ?, ?, ?, ?)").join(", ")}`;
export const orderingMembersDelete = (n: number) => `DELETE FROM ordering_members WHERE job_id IN (${list(n)})`;
/**
 * Each key's head (its first member) with the job's state and run_after: one primary-key
 * dive per key (ORDER BY pos LIMIT 1), never a read of the key's other members.
 */
export const orderingHeads = (keys: number) =>
  Array.from(
    { length: keys },
    () =>
      "(SELECT m.queue, m.part, m.ordering_key, j.id, j.state, j.run_after FROM ordering_members m JOIN jobs j ON j.id = m.job_id " +
      "WHERE m.queue = ? AND m.part = ? AND m.ordering_key = ? ORDER BY m.pos LIMIT 1)",
  ).join(" UNION ALL ");
export const promoteIds = (set: string, n: number) =>
  `UPDATE jobs SET ${set} WHERE id IN (${list(n)}) AND state = 'waiting'`;
/** RetryFailedJobs, for jobs with a key: lock them (still failed) before they rejoin their sequences. */
export const lockFailedKeyed = (n: number) =>
  `SELECT id, queue, part, ordering_key FROM jobs WHERE id IN (${list(n)}) AND state = 'failed' FOR UPDATE`;

// ---- workflows (workflows.ts; docs/mysql.md, "Workflows"): definitions on shard 0, instances on each shard

export const WORKFLOW_INSERT =
  "INSERT INTO workflow_versions (name, version, definition, created_at) VALUES (?, ?, ?, ?)";
/** One version, or the latest (the last entry of the name's primary-key range). */
export const workflowSelect = (byVersion: boolean) =>
  `SELECT definition, created_at FROM workflow_versions WHERE name = ?${byVersion ? " AND version = ?" : ""} ORDER BY version DESC LIMIT 1`;
export const WORKFLOW_LATEST_ALL =
  "SELECT v.definition, v.created_at FROM workflow_versions v JOIN " +
  "(SELECT name, MAX(version) AS version FROM workflow_versions GROUP BY name) latest " +
  "ON latest.name = v.name AND latest.version = v.version ORDER BY v.name";
export const INSTANCE_SELECT = "SELECT instance FROM workflow_instances WHERE id = ?";
/** The revision fence of a workflow step: the instance's row locked until the step commits. */
export const INSTANCE_REV_LOCK = "SELECT rev FROM workflow_instances WHERE id = ? FOR UPDATE";
const INSTANCE_COLUMNS = "id, workflow, state, rev, created_at, ended_at, instance";
export const INSTANCE_INSERT = `INSERT INTO workflow_instances (${INSTANCE_COLUMNS}) VALUES (${list(7)})`;
export const INSTANCE_UPSERT =
  `${INSTANCE_INSERT} ON DUPLICATE KEY UPDATE workflow = VALUES(workflow), state = VALUES(state), rev = VALUES(rev), ` +
  "created_at = VALUES(created_at), ended_at = VALUES(ended_at), instance = VALUES(instance)";
/**
 * Instances newest first (created_at, then id, descending) after a keyset cursor, with
 * the filters given: each combination has its index (migration 0008), read backwards and
 * stopped by LIMIT. Without a filter the index is forced: MariaDB would rather read the
 * whole table and sort it than read the first LIMIT entries of instances_created.
 */
export const instanceList = (workflow: boolean, state: boolean, after: boolean) => {
  const where = [
    ...(workflow ? ["workflow = ?"] : []),
    ...(state ? ["state = ?"] : []),
    ...(after ? ["(created_at < ? OR (created_at = ? AND id < ?))"] : []),
  ];
  const from = workflow || state ? "workflow_instances" : "workflow_instances FORCE INDEX (instances_created)";
  return `SELECT instance FROM ${from}${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY created_at DESC, id DESC LIMIT ?`;
};
/** Retention: ended instances (ended_at is NULL while running), oldest end first; then deleted by id. */
export const INSTANCES_ENDED =
  "SELECT id, ended_at FROM workflow_instances WHERE ended_at < ? ORDER BY ended_at LIMIT ?";
export const instancesDelete = (n: number) =>
  `DELETE FROM workflow_instances WHERE id IN (${list(n)}) AND ended_at < ?`;

// ---- schedules (schedules.ts; docs/mysql.md, "Workflows"): on each shard, beside the instances

export const SCHEDULE_SELECT = "SELECT schedule FROM schedules WHERE name = ?";
/** The revision fence of a fire: the schedule's row locked until the fire commits. */
export const SCHEDULE_REV_LOCK = "SELECT rev FROM schedules WHERE name = ? FOR UPDATE";
/** Serializes inserts, so the quota's count holds until the insert commits (migration 0009). */
export const SCHEDULE_INSERTS_LOCK = "SELECT id FROM schedule_inserts WHERE id = 1 FOR UPDATE";
export const SCHEDULE_COUNT = "SELECT COUNT(*) AS n FROM schedules";
export const SCHEDULE_INSERT = "INSERT INTO schedules (rev, next_fire_at, schedule, name) VALUES (?, ?, ?, ?)";
/** A schedule written over its revision (the params as SCHEDULE_INSERT's, then the revision expected). */
export const SCHEDULE_REPLACE =
  "UPDATE schedules SET rev = ?, next_fire_at = ?, schedule = ? WHERE name = ? AND rev = ?";
export const SCHEDULE_DELETE = "DELETE FROM schedules WHERE name = ?";
export const scheduleList = (after: boolean) =>
  `SELECT schedule FROM schedules${after ? " WHERE name > ?" : ""} ORDER BY name LIMIT ?`;
/** Due schedules from schedules_due (next_fire_at is NULL for none). */
export const SCHEDULES_DUE =
  "SELECT schedule FROM schedules WHERE next_fire_at <= ? ORDER BY next_fire_at, name LIMIT ?";
export const SCHEDULE_NEXT_DUE = "SELECT MIN(next_fire_at) AS at FROM schedules WHERE next_fire_at > ?";
/** Schedule names' claims (shard 0, with several shards: migration 0011, schedule-names.ts). */
export const SCHEDULE_NAME_SELECT = "SELECT shard, token FROM schedule_names WHERE name = ?";
export const SCHEDULE_NAME_COUNT = "SELECT COUNT(*) AS n FROM schedule_names";
export const SCHEDULE_NAME_INSERT = "INSERT INTO schedule_names (shard, token, name) VALUES (?, ?, ?)";
export const SCHEDULE_NAME_UPDATE = "UPDATE schedule_names SET shard = ?, token = ? WHERE name = ?";
export const SCHEDULE_NAME_DELETE = "DELETE FROM schedule_names WHERE name = ?";
/** A claim's insert refused on its shard (each shard, migration 0011). */
export const SCHEDULE_FENCE_INSERT = "INSERT INTO schedule_fences (token) VALUES (?)";
export const SCHEDULE_FENCE_DELETE = "DELETE FROM schedule_fences WHERE token = ?";
/** Whether a queue job exists (a fire's plain job, started by an earlier try). */
export const JOB_EXISTS = "SELECT id FROM jobs WHERE id = ?";

export const PEEK =
  `SELECT ${ALL_COLUMNS} FROM jobs WHERE queue = ? AND (queued_state = 'buffered' OR (queued_state = 'pending' AND run_after <= ?)) ` +
  "ORDER BY priority, run_after, seq LIMIT ?";

/**
 * Waiting jobs count as pending (users see them so), scheduled or due by their run_after.
 * Two index-only reads in one statement (one snapshot): jobs_claim gives the queued jobs
 * and how many are not queued, jobs_finished the finished ones; running is the rest.
 */
export const QUEUE_STATS =
  "SELECT q.pending, q.scheduled, q.other - f.succeeded - f.failed AS running, f.succeeded, f.failed, q.oldest_due FROM " +
  "(SELECT COALESCE(SUM(queued_state <> 'none'), 0) AS pending, " +
  "COALESCE(SUM(queued_state IN ('pending', 'waiting') AND run_after > ?), 0) AS scheduled, " +
  "COALESCE(SUM(queued_state = 'none'), 0) AS other, " +
  "MIN(CASE WHEN queued_state = 'buffered' OR (queued_state IN ('pending', 'waiting') AND run_after <= ?) THEN run_after END) AS oldest_due " +
  "FROM jobs WHERE queue = ?) q CROSS JOIN " +
  "(SELECT COALESCE(SUM(finished_state = 'succeeded'), 0) AS succeeded, COALESCE(SUM(finished_state = 'failed'), 0) AS failed " +
  "FROM jobs WHERE queue = ? AND finished_state IN ('succeeded', 'failed')) f";
