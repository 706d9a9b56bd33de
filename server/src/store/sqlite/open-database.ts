/**
 * Opens a SQLite store's file for the process that will own it: the directory is created if
 * missing, the file locked (file-lock.ts), configured (WAL, the chosen synchronous level,
 * incremental auto-vacuum for a new file) and migrated. Every way this can fail ends in an
 * error that names the file and what to do, never in a crash or a hang.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type FileLock, type Holder, lockDatabase, thisProcess } from "./file-lock.js";
import { type MigrateResult, migrate } from "./migrate.js";
import type { SqliteLocation } from "./sqlite-url.js";

export interface OpenedDatabase {
  db: DatabaseSync;
  /** The file, absolute. */
  path: string;
  migration: MigrateResult;
  /** Closes the database (its last checkpoint folds the WAL back into the file) and lets go of the lock. */
  close(): void;
}

/** How long a statement waits for a lock another connection holds (only readers such as `runlater backup` ever do). */
const BUSY_TIMEOUT_MS = 5_000;
/** Page cache of the owning connection: 64 MiB (SQLite's default is 2 MiB). */
const CACHE_KIB = 64 * 1024;

export function openDatabase(location: SqliteLocation, now = Date.now()): OpenedDatabase {
  const path = resolve(location.path);
  let lock: FileLock | undefined;
  let db: DatabaseSync | undefined;
  try {
    prepareDirectory(path);
    lock = lockDatabase(path, () => readHolder(path));
    db = new DatabaseSync(path, { timeout: BUSY_TIMEOUT_MS });
    // Only takes effect on a new file (before its first table): pages freed by deletes can
    // then be given back to the file system (free-pages.ts).
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    const mode = (db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode: string }).journal_mode;
    if (mode !== "wal") throw new Error(`${path}: SQLite refused WAL mode (journal_mode is ${mode})`);
    db.exec(`PRAGMA synchronous = ${location.synchronous === "full" ? "FULL" : "NORMAL"}`);
    db.exec(`PRAGMA cache_size = -${CACHE_KIB}`);
    db.exec("PRAGMA temp_store = MEMORY");
    const migration = migrate(db, path, now);
    takeOver(db, now);
    const opened = db;
    const held = lock;
    return {
      db: opened,
      path,
      migration,
      close() {
        opened.close();
        held.release();
      },
    };
  } catch (err) {
    db?.close();
    lock?.release();
    throw describeError(err, path);
  }
}

/**
 * This process owns the file now: whatever an earlier owner held (partition leases, its
 * brokers' registrations) ended with it, so this one's brokers take every partition at once
 * instead of waiting out the old leases. Epochs stay: they only grow. Jobs an earlier owner
 * had buffered go back to pending when a broker takes their partition (a higher epoch).
 */
function takeOver(db: DatabaseSync, now: number): void {
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec("UPDATE leases SET owner = '', expires_at = 0 WHERE owner <> ''");
    db.exec("DELETE FROM brokers");
    db.prepare(
      "INSERT INTO meta (name, value) VALUES ('holder', ?) ON CONFLICT DO UPDATE SET value = excluded.value",
    ).run(JSON.stringify(thisProcess(now)));
    db.exec("COMMIT");
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
}

/** Creates the file's directory if missing; refuses a path that is a directory. */
function prepareDirectory(path: string): void {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`${path} is a directory: --store sqlite:PATH names the database file (e.g. ${path}/runlater.db)`);
  mkdirSync(dirname(path), { recursive: true });
}

/** Who holds the lock, as the holder wrote it into the database; undefined if it cannot be read. */
function readHolder(path: string): Holder | undefined {
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: 1000 });
    const row = db.prepare("SELECT value FROM meta WHERE name = 'holder'").get() as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as Holder) : undefined;
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

/** SQLite's result codes that have a better message than SQLite's own. */
const SQLITE_CORRUPT = 11;
const SQLITE_CANTOPEN = 14;
const SQLITE_NOTADB = 26;
const SQLITE_READONLY = 8;
const SQLITE_FULL = 13;

/** An error a person can act on, naming the file. */
export function describeError(err: unknown, path: string): Error {
  const e = err as { errcode?: number; message?: string; code?: string };
  const reason = e.message ?? String(err);
  switch (e.errcode) {
    case SQLITE_NOTADB:
      return new Error(
        `${path} is not a SQLite database (${reason}): is --store sqlite:PATH pointing at the right file?`,
      );
    case SQLITE_CORRUPT:
      return new Error(
        `${path} is damaged (${reason}): restore it from a backup (runlater backup), or move it aside to start empty`,
      );
    case SQLITE_CANTOPEN:
      return new Error(`cannot open or create ${path} (${reason}): is its directory writable?`);
    case SQLITE_READONLY:
      return new Error(`cannot write ${path} (${reason}): is the file or its file system read-only?`);
    case SQLITE_FULL:
      return new Error(`cannot write ${path}: the disk is full (${reason})`);
  }
  if (e.code === "ENOTDIR" || e.code === "EACCES" || e.code === "EROFS" || e.code === "EEXIST")
    return new Error(`cannot create the directory of ${path} (${reason})`);
  return err instanceof Error ? err : new Error(reason);
}
