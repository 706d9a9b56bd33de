/**
 * Parsers for flag values. Each throws commander's InvalidArgumentError, so a bad value
 * is reported as a usage error (exit 2) naming the flag, before any call is made.
 */
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { InvalidArgumentError } from "commander";

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A duration such as 500ms, 30s, 5m, 2h, 7d or a sum of them (1h30m, 1.5s), in whole
 * milliseconds. A bare number is refused (is "30" seconds or milliseconds?) except 0.
 */
export function parseDurationMs(value: string): number {
  const text = value.trim();
  if (text === "0") return 0;
  const token = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;
  let total = 0;
  let at = 0;
  while (at < text.length) {
    token.lastIndex = at;
    const match = token.exec(text);
    if (!match) break;
    total += Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
    at = token.lastIndex;
  }
  if (text === "" || at !== text.length || !Number.isFinite(total)) {
    throw new InvalidArgumentError(
      `"${value}" is not a duration: use a number and a unit (ms, s, m, h, d), e.g. 500ms, 30s, 5m, 1h30m`,
    );
  }
  return Math.round(total);
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/**
 * A point in time as epoch ms: an RFC 3339 timestamp (2026-05-01T12:00:00Z) or a delay
 * from now (10s, 5m). The delay is resolved when the flag is parsed, just before the call.
 */
export function parseTimeMs(value: string, now: () => number = Date.now): number {
  if (RFC3339.test(value)) {
    const ms = Date.parse(value.replace(" ", "T"));
    if (Number.isFinite(ms)) return ms;
  }
  try {
    return now() + parseDurationMs(value);
  } catch {
    throw new InvalidArgumentError(
      `"${value}" is neither an RFC 3339 time (2026-05-01T12:00:00Z) nor a delay (10s, 5m, 1h)`,
    );
  }
}

/** A whole number ≥ 1 (counts, priorities, partitions). */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new InvalidArgumentError(`"${value}" is not a whole number of at least 1`);
  return n;
}

/** A whole number ≥ 0 that fits a uint32 field; 0 usually means "the default". */
export function uint32(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > 0xffff_ffff)
    throw new InvalidArgumentError(`"${value}" is not a whole number from 0 to 4294967295`);
  return n;
}

/** A non-negative number, fractions allowed (rates). */
export function nonNegativeNumber(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError(`"${value}" is not a number of at least 0`);
  return n;
}

const STATES: Record<string, JobState> = {
  pending: JobState.PENDING,
  running: JobState.RUNNING,
  succeeded: JobState.SUCCEEDED,
  failed: JobState.FAILED,
};

export const stateNames = Object.keys(STATES);

/** A job state by its short name (pending, running, succeeded, failed), any case. */
export function parseState(value: string): JobState {
  const state = STATES[value.toLowerCase()];
  if (state === undefined)
    throw new InvalidArgumentError(`"${value}" is not a job state: use ${stateNames.join(", ")}`);
  return state;
}
