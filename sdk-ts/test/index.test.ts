/** The package entry point exposes the public names (and only through named exports). */
import { describe, expect, it } from "vitest";
import * as sdk from "../src/index.js";

describe("@runlater/sdk entry point", () => {
  it("exports what users need", () => {
    for (const name of [
      "createRunlaterClient",
      "Worker",
      "RetryAfter",
      "DoNotRetry",
      "Snooze",
      "snooze",
      "constant",
      "linear",
      "exponential",
      "pinlaterDefault",
      "errorReason",
      "errorInfo",
    ]) {
      expect(typeof (sdk as Record<string, unknown>)[name], name).toBe("function");
    }
    expect(sdk.JobState.SUCCEEDED).toBe(3);
    expect(sdk.Outcome.STALE_CLAIM).toBe(2);
    expect(sdk.ErrorReason.QUEUE_NOT_FOUND).toBe(1);
  });

  it("exports what integrators need", () => {
    expect(sdk.JobService.typeName).toBe("runlater.v1.JobService");
    expect(sdk.WorkerService.typeName).toBe("runlater.v1.WorkerService");
    expect(sdk.QueueService.typeName).toBe("runlater.v1.QueueService");
    expect(sdk.ErrorInfoSchema.typeName).toBe("runlater.v1.ErrorInfo");
    expect("default" in sdk).toBe(false);
  });
});
