-- runlater schema, version 7: API tokens (docs/security.md). Shard 0 only. One row per
-- token, the record as JSON; a token's secret is kept only as its SHA-256.
CREATE TABLE IF NOT EXISTS api_tokens (
  id      VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  record  TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
