import { describe, expect, it } from "vitest";
import { constant, exponential, linear, pinlaterDefault } from "../src/retry.js";

describe("retry policies", () => {
  it("constant", () => {
    const p = constant(700);
    expect([1, 2, 10].map(p)).toEqual([700, 700, 700]);
  });
  it("linear, capped", () => {
    const p = linear(100, 250);
    expect([1, 2, 3, 4].map(p)).toEqual([100, 200, 250, 250]);
  });
  it("exponential, capped, and safe for huge attempts", () => {
    const p = exponential(100, 1_000);
    expect([1, 2, 3, 4, 5, 10_000].map(p)).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(exponential(0)(5000)).toBe(0);
  });
  it("pinlaterDefault matches the RetryPolicy formula of queue_service.proto", () => {
    const p = pinlaterDefault();
    const seconds = Array.from({ length: 10 }, (_, i) => p(i + 1) / 1000);
    expect(seconds).toEqual([5, 10, 15, 20, 25, 50, 100, 200, 400, 800]);
    expect(p(11)).toBe(1_600_000);
    expect(p(12)).toBe(3_200_000);
    expect(p(13)).toBe(3_600_000);
    expect(p(500)).toBe(3_600_000);
  });
  it("rejects nonsense delays", () => {
    expect(() => constant(-1)).toThrow(RangeError);
    expect(() => exponential(Number.NaN)).toThrow(RangeError);
  });
});
