package dev.runlater;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * A change to one running job, sent with {@link RunlaterClient#checkpoint}. With nothing but the
 * ids ({@link #renew}) it renews the claim for the queue's claim timeout.
 *
 * @param jobId the job's id
 * @param claimToken the claim token Dequeue gave
 * @param extendClaimBy extend the claim to now + this; null: the queue's claim timeout
 * @param newBody replace the body (chained jobs); null: keep it
 * @param moveToPending release the job back to PENDING, charging no attempt
 * @param runAfter with moveToPending: when the job becomes due again; null: now
 * @param attemptsAllowed reset attempts allowed and remaining to this; 0 leaves them
 * @param customStatus appended to the job's custom status; empty: nothing
 */
public record Checkpoint(
    String jobId,
    String claimToken,
    Duration extendClaimBy,
    byte[] newBody,
    boolean moveToPending,
    Instant runAfter,
    int attemptsAllowed,
    String customStatus) {

  /** Normalises null text to empty. */
  public Checkpoint {
    Objects.requireNonNull(jobId, "jobId");
    Objects.requireNonNull(claimToken, "claimToken");
    customStatus = customStatus == null ? "" : customStatus;
  }

  /** Renew the claim for the queue's claim timeout (a heartbeat). */
  public static Checkpoint renew(DequeuedJob job) {
    return new Checkpoint(job.jobId(), job.claimToken(), null, null, false, null, 0, "");
  }

  /** Extend the claim to now + {@code by}. */
  public static Checkpoint extendBy(DequeuedJob job, Duration by) {
    return new Checkpoint(job.jobId(), job.claimToken(), by, null, false, null, 0, "");
  }

  /** Release the job back to PENDING, due at {@code runAfter} (null: now); no attempt charged. */
  public static Checkpoint moveToPending(DequeuedJob job, Instant runAfter) {
    return new Checkpoint(job.jobId(), job.claimToken(), null, null, true, runAfter, 0, "");
  }

  /** This checkpoint, also replacing the job's body. */
  public Checkpoint withNewBody(byte[] newBody) {
    return new Checkpoint(
        jobId,
        claimToken,
        extendClaimBy,
        newBody,
        moveToPending,
        runAfter,
        attemptsAllowed,
        customStatus);
  }

  /** This checkpoint, also resetting attempts allowed and remaining. */
  public Checkpoint withAttemptsAllowed(int attemptsAllowed) {
    return new Checkpoint(
        jobId,
        claimToken,
        extendClaimBy,
        newBody,
        moveToPending,
        runAfter,
        attemptsAllowed,
        customStatus);
  }

  /** This checkpoint, also appending to the job's custom status. */
  public Checkpoint withCustomStatus(String customStatus) {
    return new Checkpoint(
        jobId,
        claimToken,
        extendClaimBy,
        newBody,
        moveToPending,
        runAfter,
        attemptsAllowed,
        customStatus);
  }
}
