-- runlater schema, version 5: fewer bytes and index entries move when a job changes state
-- (docs/mysql.md, "Why each index exists"; figures in docs/benchmarks.md).
-- One ALTER, so InnoDB applies all of it or none; prepared only while the new columns are
-- missing, so it is re-runnable. It rebuilds the jobs table (a type change and stored
-- columns): on a large table, writes wait for the copy.
--
-- claim_token becomes CHAR(64) (ascii: a fixed 64 bytes). As a VARCHAR, a hand-out ('' to
-- a token) or a failure (a token to '') changed the row's length, so InnoDB rewrote the
-- record instead of updating it in place.
--
-- queued_state and finished_state are stored generated columns that copy `state` only
-- where an index needs it: queued_state is pending, buffered or waiting (else 'none'),
-- finished_state is succeeded or failed (else 'none'). jobs_claim and jobs_finished are
-- keyed on them instead of on `state`, so a transition moves an entry of those indexes
-- only when it enters or leaves what they serve: claim, start and ACK each used to move
-- both (plus jobs_expiry for start and ACK); now claim moves jobs_claim, start jobs_claim
-- and jobs_expiry, ACK jobs_expiry and jobs_finished.
SET @runlater_ddl = IF(
  (SELECT COUNT(*) FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'queued_state') = 0,
  'ALTER TABLE jobs MODIFY claim_token CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, ADD COLUMN queued_state ENUM(''none'', ''pending'', ''buffered'', ''waiting'') GENERATED ALWAYS AS (IF(state IN (''pending'', ''buffered'', ''waiting''), state, ''none'')) STORED, ADD COLUMN finished_state ENUM(''none'', ''succeeded'', ''failed'') GENERATED ALWAYS AS (IF(state IN (''succeeded'', ''failed''), state, ''none'')) STORED, DROP INDEX jobs_claim, ADD KEY jobs_claim (queue, part, queued_state, priority, run_after, seq), DROP INDEX jobs_finished, ADD KEY jobs_finished (queue, finished_state, finished_at, seq)',
  'DO 0');
PREPARE runlater_ddl FROM @runlater_ddl;
EXECUTE runlater_ddl;
DEALLOCATE PREPARE runlater_ddl;
