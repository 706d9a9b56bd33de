package dev.runlater;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * A job as lookups ({@link RunlaterClient#getJobs}, {@link RunlaterClient#scanJobs}) return it.
 * Timestamps the server left unset are null.
 *
 * @param jobId opaque id
 * @param queue the job's queue
 * @param state current state
 * @param priority 1 is the highest
 * @param body payload; empty unless the lookup asked for bodies
 * @param runAfter earliest time the job may run next
 * @param attemptsAllowed attempts allowed in all
 * @param attemptsRemaining attempts not yet started (a RUNNING job's attempt is counted)
 * @param customStatus text producers and workers appended
 * @param createdAt when the job was enqueued
 * @param updatedAt when the job last changed
 * @param claimExpiresAt while RUNNING: when the claim expires; else null
 * @param finishedAt when the job reached SUCCEEDED or FAILED; else null
 * @param orderingKey the ordering key given at enqueue; empty if none (always on FIFO queues)
 * @param traceparent the W3C traceparent given at enqueue (docs/tracing.md); empty if none
 */
public record Job(
    String jobId,
    String queue,
    JobState state,
    int priority,
    byte[] body,
    Instant runAfter,
    int attemptsAllowed,
    int attemptsRemaining,
    String customStatus,
    Instant createdAt,
    Instant updatedAt,
    Instant claimExpiresAt,
    Instant finishedAt,
    String orderingKey,
    String traceparent) {

  /** The body decoded as UTF-8. */
  public String bodyUtf8() {
    return new String(body, StandardCharsets.UTF_8);
  }
}
