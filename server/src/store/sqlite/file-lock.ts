/**
 * One process owns a SQLite store's file: a second server (or `runlater migrate`) on the
 * same file is refused with a clear error instead of both writing it.
 *
 * The lock is an exclusive transaction held open on a side file, `<db>-lock`, for as long as
 * the owner runs. SQLite takes it with the operating system's file locks, which the kernel
 * drops when the process ends, however it ends (SIGKILL, power loss): a crashed server leaves
 * no stale lock behind. The database file itself keeps SQLite's usual locking, so readers
 * such as `runlater backup` work while the server runs.
 *
 * Who holds the lock is written into the database (meta table, read by the refused process
 * for its message): pid, host and start time.
 */
import { hostname } from "node:os";
import { DatabaseSync } from "node:sqlite";

export interface FileLock {
  release(): void;
}

export interface Holder {
  pid: number;
  host: string;
  since: number;
}

/** SQLite's "database is locked" result code. */
const SQLITE_BUSY = 5;

/** Takes the lock of `dbPath` (the side file is created if missing); throws `describe(holder)`'s message if another process has it. */
export function lockDatabase(dbPath: string, readHolder: () => Holder | undefined): FileLock {
  const lockDb = new DatabaseSync(`${dbPath}-lock`);
  try {
    // Nothing is ever written to the side file: no journal for it either.
    lockDb.exec("PRAGMA journal_mode = MEMORY");
    lockDb.exec("BEGIN EXCLUSIVE");
  } catch (err) {
    lockDb.close();
    if ((err as { errcode?: number }).errcode !== SQLITE_BUSY) throw err;
    const holder = readHolder();
    const who = holder ? ` (pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()})` : "";
    throw new Error(
      `${dbPath} is in use by another runlater process${who}: one server owns a SQLite file. ` +
        "Stop that one, or give this one another file (--store sqlite:PATH).",
    );
  }
  return {
    release() {
      if (lockDb.isTransaction) lockDb.exec("ROLLBACK");
      lockDb.close();
    },
  };
}

/** This process, for the meta table. */
export function thisProcess(now = Date.now()): Holder {
  return { pid: process.pid, host: hostname(), since: now };
}
