-- The SQLite store's schema, version 1 (docs/sqlite.md explains each table and index).
-- Times are INTEGER epoch milliseconds from the caller's clock. STRICT tables: a value of
-- the wrong type is an error, not a silent conversion.

CREATE TABLE queues (
  name        TEXT PRIMARY KEY,
  config      TEXT NOT NULL,           -- QueueConfig as JSON
  created_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Jobs per queue and visible state (pending, running, succeeded, failed; buffered and
-- waiting jobs count as pending), moved by the statement that moves the jobs: queue stats
-- and state counts never read the jobs.
CREATE TABLE queue_counts (
  queue  TEXT NOT NULL,
  state  TEXT NOT NULL,
  n      INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
) STRICT, WITHOUT ROWID;

-- Never deleted: releasing a lease, or deleting its queue, sets owner = '' and keeps the
-- epoch, so epochs only grow.
CREATE TABLE leases (
  queue       TEXT NOT NULL,
  part        INTEGER NOT NULL,
  owner       TEXT NOT NULL,
  epoch       INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  PRIMARY KEY (queue, part)
) STRICT, WITHOUT ROWID;

CREATE TABLE brokers (
  id          TEXT PRIMARY KEY,
  url         TEXT NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- API tokens (docs/security.md): the record as JSON (a secret only as its hash), by id.
CREATE TABLE tokens (
  id      TEXT PRIMARY KEY,
  record  TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- Small named values: next_seq, the next enqueue-order number to give (kept here so a
-- retried job's new place in its ordering key outlives a restart), and holder, the process
-- that owns the file (pid, host, since: for the message a second server gets).
CREATE TABLE meta (
  name   TEXT PRIMARY KEY,
  value  ANY NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE jobs (
  seq                 INTEGER PRIMARY KEY,   -- the rowid: enqueue order, the claim's tie-break
  id                  TEXT NOT NULL UNIQUE,  -- <queue>.<partition>.<unique>
  queue               TEXT NOT NULL,
  part                INTEGER NOT NULL,
  state               TEXT NOT NULL,         -- pending, waiting, running, succeeded, failed (buffered jobs are pending here: held-jobs.ts)
  priority            INTEGER NOT NULL,
  run_after           INTEGER NOT NULL,
  attempts_allowed    INTEGER NOT NULL,
  attempts_remaining  INTEGER NOT NULL,
  attempt             INTEGER NOT NULL,
  custom_status       TEXT NOT NULL,
  created_at          INTEGER NOT NULL,
  updated_at          INTEGER NOT NULL,
  finished_at         INTEGER NOT NULL,      -- when it succeeded or failed for good; 0 otherwise
  claim_token         TEXT NOT NULL,
  claim_expires_at    INTEGER NOT NULL,
  retry_delay_ms      INTEGER NOT NULL,
  idempotency_key     TEXT,                  -- NULL: none
  ordering_key        TEXT,                  -- NULL: none
  key_pos             INTEGER,               -- place in its ordering key's sequence while in one, else NULL
  workflow            TEXT,                  -- a workflow job's run context (JSON, docs/workflows.md); NULL: none
  traceparent         TEXT,                  -- the W3C traceparent given at enqueue (docs/tracing.md); NULL: none
  body                BLOB NOT NULL          -- last: reading the other columns never walks a big body
) STRICT;

-- The claim, the next due time and the dry-run peek: a partition's pending jobs per
-- priority in dequeue order (run_after, then seq: the rowid ends every entry).
CREATE INDEX jobs_pending ON jobs (queue, part, priority, run_after) WHERE state = 'pending';
-- The claim-timeout sweep: running jobs by claim deadline.
CREATE INDEX jobs_running ON jobs (claim_expires_at) WHERE state = 'running';
-- Retention GC and RetryFailedJobs: finished jobs of a queue by finishing time.
CREATE INDEX jobs_finished ON jobs (queue, state, finished_at) WHERE state IN ('succeeded', 'failed');
-- ScanJobs (newest run_after first, ties by id) and every walk over a queue's jobs.
CREATE INDEX jobs_scan ON jobs (queue, run_after, id);
-- Enqueue dedupe: a live job's idempotency key in its queue.
CREATE UNIQUE INDEX jobs_idempotency ON jobs (queue, idempotency_key) WHERE idempotency_key IS NOT NULL;
-- Ordering keys: a key's jobs that have not ended, in sequence order; the first is the head.
CREATE INDEX jobs_key ON jobs (queue, part, ordering_key, key_pos) WHERE key_pos IS NOT NULL;
-- Queue stats: waiting jobs by run_after (scheduled ones, the oldest due).
CREATE INDEX jobs_waiting ON jobs (queue, run_after) WHERE state = 'waiting';

-- Workflow definitions (docs/workflows.md), every version: the definition as
-- domain/workflow-codec.ts encodes it. The primary key finds a version, the latest of a
-- name (its last entry) and the next name (workflowList, one dive each).
CREATE TABLE workflow_versions (
  name        TEXT NOT NULL,
  version     INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  definition  TEXT NOT NULL,
  PRIMARY KEY (name, version)
) STRICT;

-- Workflow instances: the instance as workflow-codec.ts encodes it (last: reading the other
-- columns never walks it), beside the columns its lists, its revision fence and retention need.
CREATE TABLE workflow_instances (
  id          TEXT PRIMARY KEY,
  workflow    TEXT NOT NULL,
  state       TEXT NOT NULL,            -- running, succeeded, failed, aborted, cancelled
  rev         INTEGER NOT NULL,         -- every step is written only over the revision it was decided on
  created_at  INTEGER NOT NULL,
  ended_at    INTEGER,                  -- when it ended; NULL while running
  instance    TEXT NOT NULL
) STRICT;

-- ListInstances, newest first (created_at, then id, descending) from a keyset cursor: one
-- index per combination of filters, so no list sorts or reads past its page.
CREATE INDEX instances_created ON workflow_instances (created_at, id);
CREATE INDEX instances_workflow ON workflow_instances (workflow, created_at, id);
CREATE INDEX instances_state ON workflow_instances (state, created_at, id);
CREATE INDEX instances_workflow_state ON workflow_instances (workflow, state, created_at, id);
-- Retention: ended instances, oldest end first.
CREATE INDEX instances_ended ON workflow_instances (ended_at) WHERE ended_at IS NOT NULL;

-- Schedules (docs/workflows.md#schedules), by name: the schedule as workflow-codec.ts
-- encodes it, beside its revision fence and its next fire time (0: never due).
CREATE TABLE schedules (
  name          TEXT PRIMARY KEY,
  rev           INTEGER NOT NULL,
  next_fire_at  INTEGER NOT NULL,
  schedule      TEXT NOT NULL
) STRICT;

-- The maintenance leader's fires: due schedules earliest first (ties by name), and the next
-- fire time after now (one dive).
CREATE INDEX schedules_due ON schedules (next_fire_at, name) WHERE next_fire_at > 0;
