-- runlater schema, version 6: the claim-timeout sweep finds running jobs through a ledger
-- of claim checks instead of an index on claim_expires_at (docs/mysql.md, "Claim checks").
--
-- jobs_expiry gave every job an index entry, and moved a job's entry twice (0 to the
-- deadline at start, back to 0 at ACK), each move a delete-mark, an insert and a purge.
-- Now the write that gives running jobs a deadline (a start, a checkpoint extending the
-- claim) also inserts one claim_checks row: "at due_at, look at these jobs". The sweep
-- reads the rows that are due, expires the listed jobs that are still running past
-- their deadline, and deletes the rows. An ACK touches neither the ledger nor an index
-- for it. A job's own row stays the truth: a check only says when to look.
--
-- Upgrading: the jobs running at the time get checks (the backfill below). Stop servers
-- of earlier versions before the first server of this version starts: a job an older
-- server hands out afterwards would get no check, so its claim would never time out.
--
-- Re-runnable: the table is created if missing; a backfill repeated after a crash only
-- adds duplicate checks, which are harmless (the second finds nothing to do); the index
-- is dropped only while it exists.
CREATE TABLE IF NOT EXISTS claim_checks (
  id          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  -- The claim deadline the listed jobs were given.
  due_at      BIGINT NOT NULL,
  -- Job ids separated by spaces (ids never contain one), all on this shard.
  job_ids     MEDIUMTEXT CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (id),
  -- The sweep: due checks, oldest first; and the next one's time.
  KEY claim_checks_due (due_at)
) ENGINE = InnoDB;

-- Through jobs_expiry while it exists (claim_expires_at is 0 unless running).
INSERT INTO claim_checks (due_at, job_ids) SELECT claim_expires_at, id FROM jobs WHERE claim_expires_at > 0 AND state = 'running';

SET @runlater_ddl = IF(
  (SELECT COUNT(*) FROM information_schema.statistics
    WHERE table_schema = DATABASE() AND table_name = 'jobs' AND index_name = 'jobs_expiry') > 0,
  'ALTER TABLE jobs DROP INDEX jobs_expiry',
  'DO 0');
PREPARE runlater_ddl FROM @runlater_ddl;
EXECUTE runlater_ddl;
DEALLOCATE PREPARE runlater_ddl;
