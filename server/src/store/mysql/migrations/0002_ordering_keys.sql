-- runlater schema version 2: ordering keys (docs/mysql.md, "Ordering keys").
-- Re-runnable: MySQL 8 has no ADD COLUMN IF NOT EXISTS, so the ALTER is prepared only
-- while the column is missing; being one statement, InnoDB applies all of it or none.
-- Appending an ENUM value and adding a nullable column at the end are metadata-only
-- changes (no table rebuild) on MySQL 8 and MariaDB >= 10.6.

-- jobs.state gains 'waiting' (behind an earlier job of its ordering key; shown as
-- PENDING). jobs.ordering_key is NULL without a key; VARBINARY so keys compare byte for
-- byte (the _bin collations ignore trailing spaces). No index on jobs: jobs without a
-- key must not pay for keys, so sequences live in the two tables below.
SET @runlater_ddl = IF(
  (SELECT COUNT(*) FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'ordering_key') = 0,
  'ALTER TABLE jobs MODIFY state ENUM(''pending'', ''buffered'', ''running'', ''succeeded'', ''failed'', ''waiting'') NOT NULL, ADD COLUMN ordering_key VARBINARY(512) NULL',
  'DO 0');
PREPARE runlater_ddl FROM @runlater_ddl;
EXECUTE runlater_ddl;
DEALLOCATE PREPARE runlater_ddl;

-- One row per (partition, key) that has jobs not yet ended, deleted with the last of
-- them. Every change to a key's sequence locks this row first (enqueues through other
-- servers included: READ COMMITTED takes no gap locks, so nothing else could serialize
-- them), and next_pos numbers the sequence.
CREATE TABLE IF NOT EXISTS ordering_keys (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  part          SMALLINT UNSIGNED NOT NULL,
  ordering_key  VARBINARY(512) NOT NULL,
  next_pos      BIGINT NOT NULL,
  PRIMARY KEY (queue, part, ordering_key)
) ENGINE = InnoDB;

-- The jobs of a key that have not ended, in sequence order: the first is the head, the
-- only one that is pending, buffered or running; the others are 'waiting'.
CREATE TABLE IF NOT EXISTS ordering_members (
  queue         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  part          SMALLINT UNSIGNED NOT NULL,
  ordering_key  VARBINARY(512) NOT NULL,
  pos           BIGINT NOT NULL,
  job_id        VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (queue, part, ordering_key, pos),
  -- A job leaves by id (it ended or was deleted).
  UNIQUE KEY ordering_members_job (job_id)
) ENGINE = InnoDB;
