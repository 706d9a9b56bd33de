-- runlater schema, version 11: schedule names unique across shards (docs/workflows.md
-- "Stores of several shards", store/schedule-names.ts). Created on every shard; with one
-- shard both stay empty.

-- Shard 0: each schedule name's claim, taken (under the schedule_inserts lock, which makes
-- the count of claims the quota) before the schedule is inserted on its shard: the shard
-- it goes on and the token of the create that claimed it.
CREATE TABLE IF NOT EXISTS schedule_names (
  name   VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  shard  INT NOT NULL,
  token  CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (name)
) ENGINE = InnoDB;

-- Each shard: tokens of creates whose claim another create took over; their insert here is
-- refused (and the row deleted) in the insert's own transaction.
CREATE TABLE IF NOT EXISTS schedule_fences (
  token  CHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (token)
) ENGINE = InnoDB;
