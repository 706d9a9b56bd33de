package dev.runlater;

import java.time.Duration;

/**
 * A queue's server-side retry policy: the delay before attempt n+1 after attempt n failed, unless
 * the worker's failure gave a delay. {@code initialDelay × n} for {@code n ≤ linearSteps}, then
 * {@code initialDelay × linearSteps × 2^(n − linearSteps)}, capped at {@code maxDelay}.
 *
 * <p>In a {@link QueueConfig} for CreateQueue, null or zero fields take the defaults (5 s, 5, 1 h),
 * which give PinLater's production delays 5, 10, 15, 20, 25, 50, 100, 200, 400, 800 s.
 *
 * @param initialDelay base delay
 * @param linearSteps how many retries grow linearly before growth turns exponential
 * @param maxDelay upper bound on any delay
 */
public record QueueRetryPolicy(Duration initialDelay, int linearSteps, Duration maxDelay) {

  /** The server's default policy, spelled out. */
  public static QueueRetryPolicy pinLaterDefault() {
    return new QueueRetryPolicy(Duration.ofSeconds(5), 5, Duration.ofHours(1));
  }

  /**
   * The delay this policy gives after attempt {@code attempt} (from 1) failed, computed the way the
   * proto comment says the server does. Null fields count as their defaults.
   */
  public Duration delayAfter(int attempt) {
    Duration base =
        initialDelay == null || initialDelay.isZero() ? Duration.ofSeconds(5) : initialDelay;
    Duration cap = maxDelay == null || maxDelay.isZero() ? Duration.ofHours(1) : maxDelay;
    int steps = linearSteps == 0 ? 5 : linearSteps;
    int n = Math.max(1, attempt);
    Duration delay;
    if (n <= steps) {
      delay = base.multipliedBy(n);
    } else {
      int doublings = n - steps;
      // Past 2^40 any sane cap has long been reached; avoid overflowing the multiplication.
      if (doublings > 40) {
        return cap;
      }
      delay = base.multipliedBy(steps).multipliedBy(1L << doublings);
    }
    return delay.compareTo(cap) > 0 ? cap : delay;
  }
}
