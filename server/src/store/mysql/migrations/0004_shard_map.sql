-- runlater schema, version 4: the queue → partition → shard map becomes stored data, so
-- shards can be appended to the --store list without moving anything (shard-map.ts).
-- Re-runnable: CREATE … IF NOT EXISTS only.

-- Each shard: what it knows about its place in the --store list. Rows: 'index' (this
-- shard's position), and on shard 0 'shards' (the count the deployment was created with,
-- set once: queues without a placement row use the formula over it) and 'shards_total'
-- (the count now; grows as shards are added).
CREATE TABLE IF NOT EXISTS shard_meta (
  name   VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  value  BIGINT NOT NULL,
  PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Shard 0 only, beside `queues`: each queue's shard per partition, comma-separated by
-- partition ("0,1,2,0"). Written with the queue row, grown with its partitions, deleted
-- with it. A queue created before version 4 has no row (the formula places it).
CREATE TABLE IF NOT EXISTS queue_placement (
  name    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  shards  TEXT CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
