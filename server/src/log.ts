/** Structured JSON logs on stderr (stdout is kept for the CLI's own output). */
import { type Logger, pino } from "pino";

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "runlater" } }, pino.destination({ fd: 2, sync: false }));
}

export const silentLogger: Logger = pino({ level: "silent" });

/**
 * Logs an event that can repeat many times a second (a refused connection) without
 * flooding: the first occurrence at once, then at most one line per `everyMs` carrying
 * `count`, the occurrences since the last line.
 */
export function throttledLog(
  log: Logger,
  level: "info" | "warn" | "error",
  msg: string,
  everyMs = 10_000,
): (fields?: Record<string, unknown>) => void {
  let pending = 0;
  let last: Record<string, unknown> | undefined;
  let window: NodeJS.Timeout | undefined;
  const open = () => {
    window = setTimeout(() => {
      if (pending === 0) {
        window = undefined;
        return;
      }
      log[level]({ ...last, count: pending }, msg);
      pending = 0;
      open();
    }, everyMs);
    window.unref();
  };
  return (fields) => {
    if (window) {
      pending++;
      last = fields;
      return;
    }
    log[level]({ ...fields, count: 1 }, msg);
    open();
  };
}
