import { describe, expect, it } from "vitest";
import { DoNotRetry, RetryAfter, Snooze, snooze } from "../src/control.js";
import { constant } from "../src/retry.js";
import { outcomeOfError, outcomeOfResult } from "../src/worker/outcome.js";

describe("handler control flow", () => {
  it("recognises the classes by their Symbol.for brand, as a second SDK copy would make them", () => {
    // What a duplicate install's RetryAfter instance looks like to this copy.
    const foreign = Object.assign(new Error("x"), { [Symbol.for("runlater.RetryAfter")]: true, delayMs: 5 });
    expect(foreign instanceof RetryAfter).toBe(true);
    expect(foreign instanceof DoNotRetry).toBe(false);
    expect({ [Symbol.for("runlater.Snooze")]: true, delayMs: 1 } instanceof Snooze).toBe(true);
    expect(new Error("plain") instanceof RetryAfter).toBe(false);
    expect(new RetryAfter(1) instanceof Error).toBe(true);
    expect(snooze(10) instanceof Snooze).toBe(true);
  });

  it("maps results and errors to outcomes", () => {
    expect(outcomeOfResult(undefined)).toEqual({ kind: "success", customStatus: "" });
    expect(outcomeOfResult("done")).toEqual({ kind: "success", customStatus: "done" });
    expect(outcomeOfResult(snooze(250, "later"))).toEqual({ kind: "snooze", delayMs: 250, customStatus: "later" });
    expect(outcomeOfError(new Error("boom"), 1, undefined, 500)).toEqual({
      kind: "failure",
      customStatus: "boom",
      retryDelayMs: undefined,
      noRetry: false,
    });
    expect(outcomeOfError(new Error("boom"), 3, constant(40), 500)).toMatchObject({ retryDelayMs: 40 });
    expect(outcomeOfError(new RetryAfter(99, "soon"), 1, constant(40), 500)).toEqual({
      kind: "failure",
      customStatus: "soon",
      retryDelayMs: 99,
      noRetry: false,
    });
    expect(outcomeOfError(new DoNotRetry("never"), 1, constant(40), 500)).toEqual({
      kind: "failure",
      customStatus: "never",
      retryDelayMs: undefined,
      noRetry: true,
    });
    expect(outcomeOfError("a string", 1, undefined, 500)).toMatchObject({ customStatus: "a string" });
    expect(outcomeOfError(new TypeError(""), 1, undefined, 500)).toMatchObject({ customStatus: "TypeError" });
    // Cut as the Python and Java SDKs cut it: 499 characters and an ellipsis.
    expect(outcomeOfError(new Error("x".repeat(600)), 1, undefined, 500)).toMatchObject({
      customStatus: `${"x".repeat(499)}…`,
    });
  });
});
