-- runlater schema, version 3: the broker registry (docs/cluster.md). Shard 0 only.
-- A broker upserts its row every lease-ttl/3; a row whose expires_at has passed is a
-- dead broker. Rows are few (one per broker process run) and dropped an hour after
-- expiry by the list query's cleanup, so no index beyond the key is needed.
CREATE TABLE IF NOT EXISTS brokers (
  id          VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  url         VARCHAR(2048) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  expires_at  BIGINT NOT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
