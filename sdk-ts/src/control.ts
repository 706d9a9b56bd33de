/**
 * Handler control flow, the same vocabulary in the TypeScript, Python and Java SDKs:
 *
 * - return normally             → success (a returned string becomes the custom status)
 * - throw anything              → failed attempt (the worker's retry policy, else the queue's)
 * - throw new RetryAfter(ms)    → failed attempt, retried after ms (if attempts are left)
 * - throw new DoNotRetry(msg)   → failed for good (no_retry)
 * - return snooze(ms)           → back to PENDING, due in ms, no attempt charged
 * - return success({ customStatus, result, noEvents })
 *                               → success with a workflow output: the result payload (at
 *                                 most 4 KiB) rides in the events posted downstream, and
 *                                 noEvents posts none (how a cycle stops itself)
 *
 * instanceof goes through Symbol.for brands rather than the class identity, so a handler
 * that imports these classes from a second copy of the SDK (duplicate installs in a
 * monorepo) is still understood by the Worker.
 */

const retryAfterBrand = Symbol.for("runlater.RetryAfter");
const doNotRetryBrand = Symbol.for("runlater.DoNotRetry");
const snoozeBrand = Symbol.for("runlater.Snooze");
const successBrand = Symbol.for("runlater.Success");

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

/** Largest result payload a workflow job's run may give (JobSuccess.result): 4 KiB. */
export const MAX_RESULT_BYTES = 4096;

/** What a successful run of a workflow job outputs; every field optional. */
export interface SuccessOptions {
  /** Appended to the job's custom status, and carried in the events posted downstream. */
  customStatus?: string;
  /** The result payload (bytes, or text sent as UTF-8), at most MAX_RESULT_BYTES. */
  result?: Uint8Array | string;
  /** Post no events downstream: the run succeeds but feeds nothing (ends a cycle). */
  noEvents?: boolean;
}

/** A success with an output; made by success(), which checks the bounds. */
export class Success {
  readonly [successBrand] = true;
  private constructor(
    readonly customStatus: string,
    readonly result: Uint8Array,
    readonly noEvents: boolean,
  ) {}
  /** @internal use success() */
  static of(o: SuccessOptions): Success {
    const result = typeof o.result === "string" ? new TextEncoder().encode(o.result) : (o.result ?? new Uint8Array());
    if (!(result instanceof Uint8Array)) throw new TypeError("success(): result must be a Uint8Array or a string");
    if (result.length > MAX_RESULT_BYTES)
      throw new RangeError(`success(): result is ${result.length} bytes; at most ${MAX_RESULT_BYTES}`);
    return new Success(o.customStatus ?? "", result, o.noEvents === true);
  }
  static [Symbol.hasInstance](value: unknown): boolean {
    return hasBrand(value, successBrand);
  }
}

/**
 * `return success({ customStatus: "3 files", result: JSON.stringify(paths) })` from the
 * handler of a workflow job: the downstream runs see both in their triggering events.
 * Throws RangeError for a result over 4 KiB (the server would refuse the whole Ack).
 * Other jobs ignore result and noEvents.
 */
export function success(options: SuccessOptions = {}): Success {
  return Success.of(options);
}
