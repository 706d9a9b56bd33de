package dev.runlater;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * A job handed to a worker by {@link RunlaterClient#dequeue}.
 *
 * @param queue the queue it came from (filled in by the SDK, not sent by the server)
 * @param jobId the job's id
 * @param body the payload
 * @param priority 1 is the highest
 * @param attempt this attempt's number, from 1
 * @param attemptsAllowed attempts in all; {@code attempt == attemptsAllowed} means last one
 * @param claimToken proof of this claim for Ack and Checkpoint; empty for a peek
 * @param claimExpiresAt when the claim expires unless acked or extended; null for a peek
 * @param createdAt when the job was enqueued
 * @param customStatus the job's custom status so far
 * @param workflow set when the job is a run of a workflow job: which run, and the events (upstream
 *     outputs) that triggered it; null otherwise
 * @param traceparent the W3C traceparent given at enqueue, which the worker's span continues
 *     (docs/tracing.md); empty if none
 */
public record DequeuedJob(
    String queue,
    String jobId,
    byte[] body,
    int priority,
    int attempt,
    int attemptsAllowed,
    String claimToken,
    Instant claimExpiresAt,
    Instant createdAt,
    String customStatus,
    WorkflowContext workflow,
    String traceparent) {

  /** A job that is not a workflow job's run, enqueued outside a trace. */
  public DequeuedJob(
      String queue,
      String jobId,
      byte[] body,
      int priority,
      int attempt,
      int attemptsAllowed,
      String claimToken,
      Instant claimExpiresAt,
      Instant createdAt,
      String customStatus) {
    this(
        queue,
        jobId,
        body,
        priority,
        attempt,
        attemptsAllowed,
        claimToken,
        claimExpiresAt,
        createdAt,
        customStatus,
        null,
        "");
  }

  /** The body decoded as UTF-8. */
  public String bodyUtf8() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** True if this is the job's last attempt. */
  public boolean isLastAttempt() {
    return attempt >= attemptsAllowed;
  }
}
