-- runlater schema, version 8: workflows (docs/workflows.md, docs/mysql.md "Workflows").
--
-- jobs.workflow: the workflow context of a run of a workflow job (JobRecord.workflow, as
-- workflow-codec.ts encodes it), NULL for every other job. A nullable column added last:
-- MariaDB (10.3+) and MySQL (8.0.12+) add it in place, without copying the table, and a
-- NULL costs a row a bit of its null bitmap. Prepared only while the column is missing,
-- so it is re-runnable.
SET @runlater_ddl = IF(
  (SELECT COUNT(*) FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'workflow') = 0,
  'ALTER TABLE jobs ADD COLUMN workflow MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL',
  'DO 0');
PREPARE runlater_ddl FROM @runlater_ddl;
EXECUTE runlater_ddl;
DEALLOCATE PREPARE runlater_ddl;

-- Workflow definitions, every version (on the instances' shard, 0).
CREATE TABLE IF NOT EXISTS workflow_versions (
  name        VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  version     INT UNSIGNED NOT NULL,
  -- The definition as workflow-codec.ts encodes it.
  definition  LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  created_at  BIGINT NOT NULL,
  -- A version by name, and the latest (the last entry of a name's range).
  PRIMARY KEY (name, version)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Workflow instances (shard 0): the instance as workflow-codec.ts encodes it, and beside it
-- the columns the lists, the revision fence and retention need.
CREATE TABLE IF NOT EXISTS workflow_instances (
  id          VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  workflow    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  state       ENUM('running', 'succeeded', 'failed', 'aborted', 'cancelled') NOT NULL,
  -- Every step is applied only over the revision it was decided on.
  rev         BIGINT NOT NULL,
  created_at  BIGINT NOT NULL,
  -- When it ended; NULL while running, so retention's index holds ended instances only.
  ended_at    BIGINT NULL,
  instance    LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  PRIMARY KEY (id),
  -- ListInstances, newest first (created_at, then id, descending) from a keyset cursor:
  -- one index per combination of filters, so no list sorts.
  KEY instances_created (created_at, id),
  KEY instances_workflow (workflow, created_at, id),
  KEY instances_state (state, created_at, id),
  KEY instances_workflow_state (workflow, state, created_at, id),
  -- Retention: ended instances, oldest end first.
  KEY instances_ended (ended_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
