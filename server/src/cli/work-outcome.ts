/**
 * What the end of a `runlater work` command means for its job (docs/cli.md#work):
 *
 *   exit 0            success; stdout's first line is appended to the custom status
 *   exit 75           failed attempt, retried after the delay on stdout's first line
 *                     (30s, 5m, 1h30m; EX_TEMPFAIL of sysexits.h); without a valid
 *                     delay, the queue's retry policy decides
 *   exit 65           failed for good, whatever attempts are left (EX_DATAERR: the job
 *                     itself is wrong)
 *   anything else     failed attempt, retried by the queue's retry policy: another exit
 *                     code, a signal, --timeout, a command that cannot start
 *
 * A failure's custom status says how the command ended and ends with the tail of its
 * stderr: `exit 3: connection refused`.
 */
import { limits } from "../domain/limits.js";
import { formatMs } from "./output.js";
import { parseDurationMs } from "./parse.js";
import { type CommandEnd, lastChars } from "./work-command.js";

/** The SDK Worker cuts a failure's status at 500 characters from its start (docs/workers.md): fit within it, so the tail stays. */
const FAILURE_STATUS_MAX = 500;

export const EXIT_RETRY_AFTER = 75;
export const EXIT_DO_NOT_RETRY = 65;

export type WorkOutcome =
  | { kind: "success"; customStatus: string }
  | { kind: "retry-after"; delayMs: number; customStatus: string }
  | { kind: "do-not-retry"; customStatus: string }
  | { kind: "failure"; customStatus: string };

export function workOutcome(end: CommandEnd, timeoutMs: number): WorkOutcome {
  if (end.startError) return failure(`cannot start the command: ${end.startError.message}`, "");
  if (end.timedOut) return failure(`timed out after ${formatMs(timeoutMs)}`, end.stderrTail);
  if (end.code === null) return failure(`killed by ${end.signal ?? "a signal"}`, end.stderrTail);
  switch (end.code) {
    case 0:
      return { kind: "success", customStatus: end.firstLine };
    case EXIT_RETRY_AFTER: {
      const delayMs = retryDelay(end.firstLine);
      if (typeof delayMs === "string") return failure(`exit 75 ${delayMs}`, end.stderrTail);
      return {
        kind: "retry-after",
        delayMs,
        customStatus: status(`exit 75, retry after ${formatMs(delayMs)}`, end.stderrTail),
      };
    }
    case EXIT_DO_NOT_RETRY:
      return { kind: "do-not-retry", customStatus: status("exit 65, not retried", end.stderrTail) };
    default:
      return failure(`exit ${end.code}`, end.stderrTail);
  }
}

/** The delay in ms, or why there is none. */
function retryDelay(line: string): number | string {
  if (line.trim() === "") return "without a delay on stdout's first line";
  try {
    return Math.min(parseDurationMs(line), limits.retryDelayMaxMs);
  } catch {
    return `with ${JSON.stringify(firstWords(line))} on stdout's first line, which is not a delay (30s, 5m, 1h30m)`;
  }
}

function failure(how: string, stderrTail: string): WorkOutcome {
  return { kind: "failure", customStatus: status(how, stderrTail) };
}

/** "how: stderr tail", at most FAILURE_STATUS_MAX characters (the tail is cut from its start). */
function status(how: string, stderrTail: string): string {
  if (stderrTail === "") return how;
  return `${how}: ${lastChars(stderrTail, Math.max(0, FAILURE_STATUS_MAX - how.length - 2))}`;
}

function firstWords(line: string): string {
  return line.length > 40 ? `${line.slice(0, 40)}…` : line;
}
