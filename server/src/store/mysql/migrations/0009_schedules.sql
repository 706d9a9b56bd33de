-- runlater schema, version 9: schedules (docs/workflows.md#schedules, docs/mysql.md "Workflows").

-- Schedules, on the instances' shard (0), beside workflow_instances so that one
-- transaction records a fire with what it starts: the schedule as workflow-codec.ts
-- encodes it, and beside it the columns its revision fence and the due index need.
CREATE TABLE IF NOT EXISTS schedules (
  name          VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  -- Every change is written only over the revision it was decided on.
  rev           BIGINT NOT NULL,
  -- The next fire time; NULL when there is none (paused, or the cron never fires again),
  -- so the due index holds only schedules that will fire.
  next_fire_at  BIGINT NULL,
  schedule      LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  PRIMARY KEY (name),
  -- scheduleDue: earliest next fire first, ties by name.
  KEY schedules_due (next_fire_at, name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One row, locked (FOR UPDATE) by every schedule insert, so that concurrent inserts count
-- the schedules one after the other and the quota holds exactly: at READ COMMITTED a
-- locking count takes no gap locks that would keep another insert out.
CREATE TABLE IF NOT EXISTS schedule_inserts (
  id  TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB;
INSERT IGNORE INTO schedule_inserts (id) VALUES (1);
