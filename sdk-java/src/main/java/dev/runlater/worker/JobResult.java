package dev.runlater.worker;

import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link JobHandler} returns: success (with an optional custom status) or snooze. Failures
 * are thrown, not returned (see {@link RetryAfter} and {@link DoNotRetry}).
 */
public final class JobResult {
  private static final JobResult SUCCESS = new JobResult("", null);

  private final String customStatus;
  private final Duration snoozeFor;

  private JobResult(String customStatus, Duration snoozeFor) {
    this.customStatus = customStatus;
    this.snoozeFor = snoozeFor;
  }

  /** The job succeeded. */
  public static JobResult success() {
    return SUCCESS;
  }

  /** The job succeeded; {@code customStatus} (null: none) is appended to its custom status. */
  public static JobResult success(String customStatus) {
    return customStatus == null ? SUCCESS : new JobResult(customStatus, null);
  }

  /**
   * Put the job back to PENDING, due after {@code delay}, charging no attempt (a checkpoint with
   * move_to_pending).
   */
  public static JobResult snooze(Duration delay) {
    return snooze(delay, "");
  }

  /**
   * Put the job back to PENDING, due after {@code delay}, charging no attempt; {@code customStatus}
   * (null: none) is appended to its custom status.
   */
  public static JobResult snooze(Duration delay, String customStatus) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("snooze delay must not be negative: " + delay);
    }
    return new JobResult(customStatus == null ? "" : customStatus, delay);
  }

  /** The custom status to append (empty: none). */
  public String customStatus() {
    return customStatus;
  }

  /** True for {@link #snooze}. */
  public boolean isSnooze() {
    return snoozeFor != null;
  }

  /** The snooze delay, or null if this is a success. */
  public Duration snoozeFor() {
    return snoozeFor;
  }

  @Override
  public String toString() {
    return isSnooze()
        ? "JobResult.snooze(" + snoozeFor + ", " + customStatus + ")"
        : "JobResult.success(" + customStatus + ")";
  }
}
