-- runlater MySQL/MariaDB schema, version 1. docs/mysql.md explains every index.
-- Times are BIGINT epoch milliseconds from the caller's clock (never TIMESTAMP: no 2038
-- overflow, no second rounding, no mixing of server and database clocks).
-- Written to be re-runnable: DDL commits on its own, so a crash mid-migration must be
-- safe to run again before the version is recorded.

-- Queue metadata: lives on shard 0 only.
CREATE TABLE IF NOT EXISTS queues (
  name        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  config      TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  created_at  BIGINT NOT NULL,
  PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Partition leases, on the shard that holds the partition, so a claim can check the
-- epoch in the same transaction as its write. Rows are never deleted: a released lease
-- keeps its epoch (owner = ''), so epochs only grow, even across queue re-creation.
CREATE TABLE IF NOT EXISTS leases (
  queue       VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  part        SMALLINT UNSIGNED NOT NULL,
  owner       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  epoch       BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  PRIMARY KEY (queue, part)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS jobs (
  -- The runlater id (<queue>.<partition>.<time><node><counter>): unique, never reused.
  id                  VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- Enqueue order: the last dequeue tie-break. Only compared within a partition.
  seq                 BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  queue               VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  part                SMALLINT UNSIGNED NOT NULL,
  state               ENUM('pending', 'buffered', 'running', 'succeeded', 'failed') NOT NULL,
  priority            TINYINT UNSIGNED NOT NULL,
  run_after           BIGINT NOT NULL,
  attempts_allowed    INT NOT NULL,
  attempts_remaining  INT NOT NULL,
  attempt             INT NOT NULL,
  custom_status       TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  created_at          BIGINT NOT NULL,
  updated_at          BIGINT NOT NULL,
  -- When the job succeeded or failed for good (0 otherwise): retention GC runs on this.
  finished_at         BIGINT NOT NULL,
  claim_token         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- Claim deadline of a running job; 0 in every other state (jobs_expiry relies on it).
  claim_expires_at    BIGINT NOT NULL,
  retry_delay_ms      BIGINT NOT NULL,
  -- Lease epoch under which the job sits in a broker's buffer (0 unless buffered).
  buffer_epoch        BIGINT NOT NULL,
  -- NULL when the job has none: NULLs never collide in a unique index.
  idempotency_key     VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  body                LONGBLOB NOT NULL,
  PRIMARY KEY (id),
  -- AUTO_INCREMENT needs an index that starts with the column.
  KEY jobs_seq (seq),
  -- Claim, next-due and peek: one range per (partition, state, priority), in dequeue order.
  KEY jobs_claim (queue, part, state, priority, run_after, seq),
  -- Claim-timeout sweep: running jobs by deadline, across queues. claim_expires_at is 0
  -- in every other state, so the range (0, now] holds running jobs only. (Not led by
  -- state: the optimizer would then pick it for GC's state = 'succeeded' and sort.)
  KEY jobs_expiry (claim_expires_at),
  -- Retention GC (oldest finished first) and retry of failed jobs (same order, seq last).
  KEY jobs_finished (queue, state, finished_at, seq),
  -- Scan: newest run_after first within a queue (the primary key id is the tie-break).
  KEY jobs_scan (queue, run_after),
  -- Idempotency keys are unique per queue while the job exists: deleting the row frees it.
  UNIQUE KEY jobs_idempotency (queue, idempotency_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
