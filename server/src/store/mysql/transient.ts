/**
 * Which MySQL/MariaDB errors are worth retrying. A transient error leaves no trace of the
 * failed transaction (InnoDB rolled it back, or the connection died before COMMIT), so
 * running it again is safe; an error during COMMIT itself is ambiguous and handled by
 * the caller (see Shard.transaction).
 */

/** Server error numbers that mean "try again": the transaction was rolled back or never ran. */
const RETRYABLE_ERRNOS = new Set([
  1205, // ER_LOCK_WAIT_TIMEOUT
  1213, // ER_LOCK_DEADLOCK
  1040, // ER_CON_COUNT_ERROR: too many connections
  1053, // ER_SERVER_SHUTDOWN
  1927, // ER_CONNECTION_KILLED (MariaDB)
  2006, // CR_SERVER_GONE_ERROR
  2013, // CR_SERVER_LOST
  4031, // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
]);

/** Client-side codes (mysql2 and Node sockets) for a connection that broke or never opened. */
const RETRYABLE_CODES = new Set([
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ER_SERVER_SHUTDOWN",
  "ER_LOCK_DEADLOCK",
  "ER_LOCK_WAIT_TIMEOUT",
  "ER_CON_COUNT_ERROR",
  "ER_CONNECTION_KILLED",
]);

interface DriverError {
  code?: unknown;
  errno?: unknown;
  fatal?: unknown;
  message?: unknown;
}

export function isTransient(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as DriverError;
  if (typeof e.errno === "number" && RETRYABLE_ERRNOS.has(e.errno)) return true;
  if (typeof e.code === "string" && RETRYABLE_CODES.has(e.code)) return true;
  // mysql2 marks errors that killed the connection as fatal; the pool drops that connection.
  if (e.fatal === true) return true;
  // Using a connection the pool had not yet noticed was dead.
  return typeof e.message === "string" && /closed state|connection is closed/i.test(e.message);
}

/** The connection itself is gone (not just the statement refused): it must not go back to the pool. */
export function isBrokenConnection(err: unknown): boolean {
  if (typeof err !== "object" || err === null) return false;
  const e = err as DriverError;
  if (e.fatal === true) return true;
  const lockConflict =
    e.errno === 1205 || e.errno === 1213 || e.code === "ER_LOCK_DEADLOCK" || e.code === "ER_LOCK_WAIT_TIMEOUT";
  return isTransient(err) && !lockConflict;
}

/** A duplicate key: which index tells whether it is an idempotency race or a replayed insert. */
export function duplicateKeyIndex(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as DriverError;
  if (e.errno !== 1062 || typeof e.message !== "string") return undefined;
  const match = /for key '(?:[\w]+\.)?([\w]+)'/.exec(e.message);
  return match?.[1] ?? "";
}
