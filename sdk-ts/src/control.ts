/**
 * Handler control flow, the same vocabulary in the TypeScript, Python and Java SDKs:
 *
 * - return normally             → success (a returned string becomes the custom status)
 * - throw anything              → failed attempt (the worker's retry policy, else the queue's)
 * - throw new RetryAfter(ms)    → failed attempt, retried after ms (if attempts are left)
 * - throw new DoNotRetry(msg)   → failed for good (no_retry)
 * - return snooze(ms)           → back to PENDING, due in ms, no attempt charged
 *
 * instanceof goes through Symbol.for brands rather than the class identity, so a handler
 * that imports these classes from a second copy of the SDK (duplicate installs in a
 * monorepo) is still understood by the Worker.
 */

const retryAfterBrand = Symbol.for("runlater.RetryAfter");
const doNotRetryBrand = Symbol.for("runlater.DoNotRetry");
const snoozeBrand = Symbol.for("runlater.Snooze");

function hasBrand(value: unknown, brand: symbol): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}

/** Fail this attempt and retry after `delayMs` (if attempts are left). */
export class RetryAfter extends Error {
  readonly [retryAfterBrand] = true;
  constructor(
    readonly delayMs: number,
    message = "",
  ) {
    super(message);
    this.name = "RetryAfter";
  }
  static [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, retryAfterBrand);
  }
}

/** Fail the job for good, whatever attempts are left. */
export class DoNotRetry extends Error {
  readonly [doNotRetryBrand] = true;
  constructor(message = "") {
    super(message);
    this.name = "DoNotRetry";
  }
  static [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, doNotRetryBrand);
  }
}

/** Put the job back to PENDING, due again after `delayMs`, without charging an attempt. */
export class Snooze {
  readonly [snoozeBrand] = true;
  constructor(
    readonly delayMs: number,
    readonly customStatus = "",
  ) {}
  static [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, snoozeBrand);
  }
}

/** `return snooze(60_000)` from a handler: run this job again in a minute, no attempt charged. */
export function snooze(delayMs: number, customStatus = ""): Snooze {
  return new Snooze(delayMs, customStatus);
}
