package dev.runlater;

import java.time.Duration;
import java.util.Objects;

/**
 * The outcome of one attempt, to report with {@link RunlaterClient#ack} or piggy-backed on {@link
 * RunlaterClient#dequeue}. Build with {@link #success} or {@link #failure}.
 *
 * @param jobId the job's id
 * @param claimToken the claim token Dequeue gave
 * @param succeeded true for success, false for failure
 * @param customStatus appended to the job's custom status; empty: nothing
 * @param retryDelay failures only: run again after this delay; null: the queue's policy decides
 * @param noRetry failures only: go to FAILED whatever attempts are left
 * @param result successes of a workflow job's run only: the result payload its events carry
 *     downstream (at most {@link Workflow#MAX_RESULT_BYTES}); empty: none
 * @param noEvents successes of a workflow job's run only: post no events downstream
 */
public record Ack(
    String jobId,
    String claimToken,
    boolean succeeded,
    String customStatus,
    Duration retryDelay,
    boolean noRetry,
    byte[] result,
    boolean noEvents) {

  /**
   * Normalises null text to empty; refuses a result over 4 KiB (the server would refuse the Ack).
   */
  public Ack {
    Objects.requireNonNull(jobId, "jobId");
    Objects.requireNonNull(claimToken, "claimToken");
    customStatus = customStatus == null ? "" : customStatus;
    result = Workflow.checkResult(result, "result");
  }

  /** An outcome without a workflow output. */
  public Ack(
      String jobId,
      String claimToken,
      boolean succeeded,
      String customStatus,
      Duration retryDelay,
      boolean noRetry) {
    this(jobId, claimToken, succeeded, customStatus, retryDelay, noRetry, null, false);
  }

  /** The attempt succeeded. */
  public static Ack success(DequeuedJob job) {
    return success(job, "");
  }

  /** The attempt succeeded; {@code customStatus} is appended to the job's status. */
  public static Ack success(DequeuedJob job, String customStatus) {
    return new Ack(job.jobId(), job.claimToken(), true, customStatus, null, false);
  }

  /**
   * A workflow job's run succeeded with an output: {@code result} (null: none) rides in the events
   * posted downstream; {@code noEvents} posts none.
   */
  public static Ack success(DequeuedJob job, String customStatus, byte[] result, boolean noEvents) {
    return new Ack(
        job.jobId(), job.claimToken(), true, customStatus, null, false, result, noEvents);
  }

  /**
   * The attempt failed.
   *
   * @param job the job
   * @param customStatus why it failed (appended to the job's status)
   * @param retryDelay delay before the next attempt; null lets the queue's retry policy decide
   * @param noRetry true to send the job to FAILED whatever attempts are left
   */
  public static Ack failure(
      DequeuedJob job, String customStatus, Duration retryDelay, boolean noRetry) {
    return new Ack(job.jobId(), job.claimToken(), false, customStatus, retryDelay, noRetry);
  }
}
