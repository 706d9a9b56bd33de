/**
 * Checks of request values against a queue's config and the server's limits, each
 * throwing the RunlaterError a client gets (the field named, the bound stated), and the
 * small conversions of request values the engine needs before it calls the store.
 */

import { RE2JS } from "re2js";
import { byteBudget } from "../domain/byte-budget.js";
import { formatDuration } from "../domain/duration.js";
import { invalidArgument, RunlaterError } from "../domain/errors.js";
import type { BodyPattern, JobFilter } from "../domain/job-filter.js";
import { limits } from "../domain/limits.js";
import type { QueueConfig } from "../domain/queue-config.js";
import { appendStatus } from "../domain/transitions.js";
import type { FilterInput } from "./inputs.js";

export function checkPriority(priority: number, config: QueueConfig, field: string, zeroMeansAll: boolean): void {
  if (zeroMeansAll && priority === 0) return;
  if (!Number.isInteger(priority) || priority < 1 || priority > config.priorities) {
    throw new RunlaterError(
      "invalid_argument",
      "INVALID_PRIORITY",
      `${field} is ${priority}; this queue has priorities 1 (highest) to ${config.priorities}`,
      field,
    );
  }
}

export function checkAttempts(attempts: number, field: string): void {
  if (attempts < 0 || attempts > limits.attemptsMax)
    throw invalidArgument(field, `${field} must be 0 (the default) to ${limits.attemptsMax}`);
}

export function bodyTooLarge(field: string, size: number, max: number): RunlaterError {
  return new RunlaterError(
    "resource_exhausted",
    "BODY_TOO_LARGE",
    `${field} is ${size} bytes; this queue accepts at most ${max} (max_body_bytes)`,
    field,
  );
}

export function boundedLimit(value: number, fallback: number, max: number, field: string): number {
  if (value === 0) return fallback;
  if (value > max) {
    throw new RunlaterError(
      "resource_exhausted",
      "BATCH_TOO_LARGE",
      `${field} ${value} is above the maximum ${max}: ask for ${max} or fewer`,
      field,
    );
  }
  return value;
}

/** A duration the request gives (a delay, an extension): not negative, at most `max`. */
export function checkDuration(ms: number | undefined, max: number, field: string): void {
  if (ms === undefined) return;
  if (ms < 0) throw invalidArgument(field, `${field} must not be negative`);
  if (ms > max)
    throw invalidArgument(field, `${field} is ${formatDuration(ms)}; the longest allowed is ${formatDuration(max)}`);
}

/** A run_after the request gives: any time in the past means now; at most limits.runAfterAheadMaxMs ahead. */
export function checkRunAfter(at: number | undefined, now: number, field: string): void {
  if (at === undefined || at - now <= limits.runAfterAheadMaxMs) return;
  throw invalidArgument(
    field,
    `${field} is ${new Date(Math.min(at, 8.64e15)).toISOString()}, more than ${formatDuration(limits.runAfterAheadMaxMs)} ahead; schedule it closer`,
  );
}

export function truncateStatus(status: string): string {
  return appendStatus("", status);
}

export function toFilter(input: FilterInput): JobFilter {
  const bodyRegex = input.bodyRegex === "" ? undefined : compileBodyRegex(input.bodyRegex);
  return { state: input.state, priority: input.priority || undefined, future: input.future, bodyRegex };
}

/**
 * RE2 syntax, matched in time linear in the body (re2js, a port without native code): a
 * backtracking RegExp such as /^(a+)+$/ over 32 bytes stalled every request of every
 * client for seconds. RE2 has no backreferences or lookaround; the message says so.
 */
function compileBodyRegex(pattern: string): BodyPattern {
  if (pattern.length > limits.bodyRegexMaxLength) {
    throw invalidArgument("body_regex", `body_regex is longer than ${limits.bodyRegexMaxLength} characters`);
  }
  try {
    return RE2JS.compile(pattern);
  } catch (err) {
    throw invalidArgument(
      "body_regex",
      `body_regex is not a valid RE2 regular expression (no backreferences or lookaround): ${(err as Error).message}`,
    );
  }
}

/** How many bodies of these sizes, from the first, fit `maxBytes`; at least one (if any). */
export function fitting(sizes: number[], maxBytes: number): number {
  const fits = byteBudget(maxBytes);
  const first = sizes.findIndex((size) => !fits(size));
  return first === -1 ? sizes.length : first;
}
