package dev.runlater.worker;

import dev.runlater.DequeuedJob;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One job a handler is running. Exactly one party settles it: the handler (ack or snooze) or {@link
 * Worker#close()} (release after the grace period), whichever comes first.
 */
final class InFlight {
  final DequeuedJob job;

  /**
   * The claim's lifetime as first seen: claim_expires_at minus local receipt time. It is at most
   * the queue's claim timeout, so renewing every half of it is always early enough (unless the
   * client clock runs behind the server's by a good part of the timeout).
   */
  final Duration claimLifetime;

  private final AtomicBoolean settled = new AtomicBoolean();

  /** When the claim expires and when to renew it, on {@link System#nanoTime()} (ClaimKeeper's). */
  volatile long expiresAt;

  volatile long renewAt;

  /** A renewal of it is in flight. */
  volatile boolean renewing;

  InFlight(DequeuedJob job, Instant receivedAt) {
    this.job = job;
    Instant expires = job.claimExpiresAt();
    Duration lifetime = expires == null ? Duration.ZERO : Duration.between(receivedAt, expires);
    this.claimLifetime = lifetime.isNegative() ? Duration.ZERO : lifetime;
  }

  /** Claims the right to report this job's outcome; false if someone already did. */
  boolean settle() {
    return settled.compareAndSet(false, true);
  }

  /** The claim now runs one lifetime from {@code nanos}, renewed halfway. */
  void renewedFor(long nanos) {
    long lifetime = claimLifetime.toNanos();
    expiresAt = nanos + lifetime;
    renewAt = nanos + Math.max(TimeUnit.MILLISECONDS.toNanos(10), lifetime / 2);
  }

  boolean isSettled() {
    return settled.get();
  }
}
