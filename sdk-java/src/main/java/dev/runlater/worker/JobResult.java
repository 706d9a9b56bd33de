package dev.runlater.worker;

import dev.runlater.Workflow;
import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link JobHandler} returns: success (with an optional custom status, and for a workflow
 * job's run an output: a result payload, or no events) or snooze. Failures are thrown, not returned
 * (see {@link RetryAfter} and {@link DoNotRetry}).
 */
public final class JobResult {
  private static final byte[] NO_RESULT = new byte[0];
  private static final JobResult SUCCESS = new JobResult("", null, NO_RESULT, false);

  private final String customStatus;
  private final Duration snoozeFor;
  private final byte[] result;
  private final boolean noEvents;

  private JobResult(String customStatus, Duration snoozeFor, byte[] result, boolean noEvents) {
    this.customStatus = customStatus;
    this.snoozeFor = snoozeFor;
    this.result = result;
    this.noEvents = noEvents;
  }

  /** The job succeeded. */
  public static JobResult success() {
    return SUCCESS;
  }

  /** The job succeeded; {@code customStatus} (null: none) is appended to its custom status. */
  public static JobResult success(String customStatus) {
    return customStatus == null ? SUCCESS : new JobResult(customStatus, null, NO_RESULT, false);
  }

  /**
   * A workflow job's run succeeded with {@code result} (null: none) as its output, carried with
   * {@code customStatus} in the events it posts downstream. Throws IllegalArgumentException for a
   * result over 4 KiB ({@link Workflow#MAX_RESULT_BYTES}): thrown in the handler, it fails the
   * attempt naming the bound. Other jobs keep only the custom status.
   */
  public static JobResult success(String customStatus, byte[] result) {
    return success(customStatus, result, false);
  }

  /**
   * Like {@link #success(String, byte[])}; {@code noEvents} posts no events downstream (how a cycle
   * stops itself).
   */
  public static JobResult success(String customStatus, byte[] result, boolean noEvents) {
    byte[] checked = Workflow.checkResult(result, "JobResult result");
    return new JobResult(customStatus == null ? "" : customStatus, null, checked, noEvents);
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
    return new JobResult(customStatus == null ? "" : customStatus, delay, NO_RESULT, false);
  }

  /** The custom status to append (empty: none). */
  public String customStatus() {
    return customStatus;
  }

  /** The result payload of a workflow job's run (empty: none). */
  public byte[] result() {
    return result.clone();
  }

  /** True if a workflow job's run posts no events downstream. */
  public boolean noEvents() {
    return noEvents;
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
