/**
 * `runlater backup DEST`: an online copy of a SQLite store, taken while its server runs.
 *
 * VACUUM INTO, from a read-only connection of its own: one statement that reads a single
 * snapshot of the database (a WAL read transaction) and writes it, compacted, to a new
 * file. The server's writes go on meanwhile (they land in the WAL after the snapshot); the
 * backup API, by contrast, starts over whenever another connection writes, so under steady
 * load it might never finish. The copy is checked (PRAGMA integrity_check) before the
 * command says it is done. Restoring is starting a server on the copy (docs/sqlite.md).
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describeError } from "./open-database.js";
import type { SqliteLocation } from "./sqlite-url.js";

export interface BackupResult {
  /** Both absolute. */
  source: string;
  dest: string;
  bytes: number;
  schemaVersion: number;
  jobs: number;
  queues: number;
}

export function backupDatabase(source: SqliteLocation, destPath: string): BackupResult {
  const path = resolve(source.path);
  const dest = resolve(destPath);
  if (!existsSync(path)) throw new Error(`no database at ${path}: is --store sqlite:PATH the server's file?`);
  if (existsSync(dest)) throw new Error(`${dest} already exists: give backup a new file name (it never overwrites)`);
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: 5000 });
    mkdirSync(dirname(dest), { recursive: true });
    db.prepare("VACUUM INTO ?").run(dest);
  } catch (err) {
    throw describeError(err, path);
  } finally {
    db?.close();
  }
  return { source: path, dest, bytes: statSync(dest).size, ...check(dest) };
}

/** Opens the copy and checks it whole; what it holds, for the report. */
function check(dest: string): Pick<BackupResult, "schemaVersion" | "jobs" | "queues"> {
  const copy = new DatabaseSync(dest, { readOnly: true });
  try {
    const integrity = copy.prepare("PRAGMA integrity_check").all() as Array<{ integrity_check: string }>;
    if (integrity.length !== 1 || integrity[0]!.integrity_check !== "ok")
      throw new Error(
        `the copy at ${dest} failed its integrity check: ${integrity.map((r) => r.integrity_check).join("; ")}`,
      );
    const one = (sql: string) => (copy.prepare(sql).get() as { n: number | null }).n ?? 0;
    return {
      schemaVersion: one("SELECT MAX(version) AS n FROM schema_migrations"),
      jobs: one("SELECT COUNT(*) AS n FROM jobs"),
      queues: one("SELECT COUNT(*) AS n FROM queues"),
    };
  } finally {
    copy.close();
  }
}
