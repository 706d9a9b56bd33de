package dev.runlater.worker;

import java.time.Duration;
import java.util.Objects;

/**
 * Thrown by a {@link JobHandler}: the attempt failed; run the job again after {@link #delay()} if
 * it has attempts left (the delayed NACK). The message goes to the job's custom status.
 */
public class RetryAfter extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Duration delay;

  /** Fail and retry after {@code delay}. */
  public RetryAfter(Duration delay, String message) {
    this(delay, message, null);
  }

  /** Fail and retry after {@code delay}, keeping {@code cause} for logs. */
  public RetryAfter(Duration delay, String message, Throwable cause) {
    super(message, cause);
    this.delay = Objects.requireNonNull(delay, "delay");
  }

  /** How long to wait before the next attempt. */
  public Duration delay() {
    return delay;
  }
}
