/** Structured JSON logs on stderr (stdout is kept for the CLI's own output). */
import { type Logger, pino } from "pino";

export type { Logger };

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "runlater" } }, pino.destination({ fd: 2, sync: false }));
}

export const silentLogger: Logger = pino({ level: "silent" });
