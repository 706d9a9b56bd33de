import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../src/broker/rate-limiter.js";

describe("rate limiter", () => {
  it("starts with a burst of one second's worth (at least one job) and refills at the rate", () => {
    const r = new RateLimiter(10, 0);
    expect(r.take(100, 0)).toBe(10);
    expect(r.take(1, 0)).toBe(0);
    expect(r.msUntilNext(0)).toBe(100);
    expect(r.take(100, 250)).toBe(2);
  });

  it("grants the next whole job on time even when fractions were added up at odd moments", () => {
    // 0.5/s: the job after the burst is due 2000 ms later. Refilling at 1333 ms first
    // sums 0.6665 + 0.3335 in floating point, which falls just short of 1.
    const r = new RateLimiter(0.5, 0);
    expect(r.take(5, 0)).toBe(1);
    r.setRate(0.5, 1333);
    expect(r.take(5, 1999)).toBe(0);
    expect(r.msUntilNext(2000)).toBe(0);
    expect(r.take(5, 2000)).toBe(1);
  });

  it("refunds tokens for jobs granted but not handed out, up to the burst", () => {
    const r = new RateLimiter(2, 0);
    expect(r.take(5, 0)).toBe(2);
    r.refund(5);
    expect(r.take(5, 0)).toBe(2);
  });

  it("treats 0 as unlimited, and a new limit after unlimited starts with a full burst", () => {
    const r = new RateLimiter(0, 0);
    expect(r.take(1000, 0)).toBe(1000);
    r.setRate(3, 0);
    expect(r.take(10, 0)).toBe(3);
  });
});
