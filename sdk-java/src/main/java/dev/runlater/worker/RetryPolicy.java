package dev.runlater.worker;

import dev.runlater.QueueRetryPolicy;
import java.time.Duration;
import java.util.Objects;

/**
 * A worker-side retry policy: the delay before the next attempt after attempt {@code n} (from 1)
 * threw. Set one on a {@link Worker} to override the queue's server-side policy for failures its
 * handlers throw; without one, the queue's policy decides.
 */
@FunctionalInterface
public interface RetryPolicy {
  /**
   * The delay after attempt {@code attempt} failed.
   *
   * @param attempt the failed attempt's number, from 1
   * @return how long to wait before the next attempt
   */
  Duration delayAfter(int attempt);

  /** Always {@code delay}. */
  static RetryPolicy constant(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    return attempt -> delay;
  }

  /** {@code step × attempt}, capped at {@code max}. */
  static RetryPolicy linear(Duration step, Duration max) {
    Objects.requireNonNull(step, "step");
    Objects.requireNonNull(max, "max");
    return attempt -> min(step.multipliedBy(Math.max(1, attempt)), max);
  }

  /** {@code initial × 2^(attempt − 1)}, capped at {@code max}. */
  static RetryPolicy exponential(Duration initial, Duration max) {
    Objects.requireNonNull(initial, "initial");
    Objects.requireNonNull(max, "max");
    return attempt -> {
      int doublings = Math.max(0, attempt - 1);
      // 2^40 times any positive delay is past any sane cap; avoid overflow.
      return doublings > 40 ? max : min(initial.multipliedBy(1L << doublings), max);
    };
  }

  /**
   * Linear for the first {@code linearSteps} retries, then exponential, capped at {@code max}: the
   * formula of the server's per-queue policy (see {@link QueueRetryPolicy}).
   */
  static RetryPolicy linearThenExponential(Duration initial, int linearSteps, Duration max) {
    return new QueueRetryPolicy(initial, linearSteps, max)::delayAfter;
  }

  /**
   * PinLater's production policy (and the server's default): 5 s, 5 linear steps, 1 h cap, i.e. 5,
   * 10, 15, 20, 25, 50, 100, 200, 400, 800 s. Use it with 11 attempts (10 retries).
   */
  static RetryPolicy pinLaterDefault() {
    return QueueRetryPolicy.pinLaterDefault()::delayAfter;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
