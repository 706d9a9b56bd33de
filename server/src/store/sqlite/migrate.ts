/**
 * Versioned schema migrations: migrations/NNNN_name.sql, applied in order, each recorded in
 * schema_migrations. SQLite's DDL is transactional, so a migration and its row commit
 * together or not at all (a crash in between leaves the previous version, and the next
 * start applies it again). The caller holds the file's lock (file-lock.ts): no other
 * process migrates at the same time.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file.replace(/\.sql$/, ""),
      sql: readFileSync(MIGRATIONS_DIR + file, "utf8"),
    }));
}

export interface MigrateResult {
  /** Names of the migrations this run applied (empty when already up to date). */
  applied: string[];
  /** The schema version now in place. */
  version: number;
}

/** Brings the schema up to date; refuses a database of something else, or of a newer runlater. */
export function migrate(db: DatabaseSync, path: string, now = Date.now()): MigrateResult {
  const migrations = loadMigrations();
  const known = Math.max(0, ...migrations.map((m) => m.version));
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>;
  if (tables.length > 0 && !tables.some((t) => t.name === "schema_migrations"))
    throw new Error(
      `${path} is a SQLite database of something else (it has tables, but not runlater's): give runlater its own file`,
    );
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT",
  );
  const done = new Set(
    (db.prepare("SELECT version FROM schema_migrations").all() as Array<{ version: number }>).map((r) => r.version),
  );
  const newest = Math.max(0, ...done);
  if (newest > known)
    throw new Error(
      `${path} has schema version ${newest}, newer than this runlater knows (${known}): run a runlater at least as new as the one that wrote it`,
    );
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(m.sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        now,
      );
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
    applied.push(m.name);
    done.add(m.version);
  }
  return { applied, version: Math.max(0, ...done) };
}
