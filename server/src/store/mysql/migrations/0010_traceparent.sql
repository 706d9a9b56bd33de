-- runlater schema, version 9: trace context (docs/tracing.md).
--
-- jobs.traceparent: the W3C traceparent a job was enqueued with (JobRecord.traceparent,
-- 55 ASCII characters), NULL for a job enqueued outside a trace. A nullable column added
-- last, as 0008 added jobs.workflow: in place, without copying the table. Prepared only
-- while the column is missing, so it is re-runnable.
SET @runlater_ddl = IF(
  (SELECT COUNT(*) FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'jobs' AND column_name = 'traceparent') = 0,
  'ALTER TABLE jobs ADD COLUMN traceparent CHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL',
  'DO 0');
PREPARE runlater_ddl FROM @runlater_ddl;
EXECUTE runlater_ddl;
DEALLOCATE PREPARE runlater_ddl;
