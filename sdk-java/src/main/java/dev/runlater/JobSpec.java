package dev.runlater;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * One job to enqueue. Start with {@link #of(String, byte[])} and refine with the {@code with*}
 * methods; zero, null and empty values mean "the queue's default".
 *
 * @param queue queue name (the queue must exist)
 * @param body opaque payload, stored byte for byte
 * @param priority 1 is the highest; 0 means the queue's default (1)
 * @param runAfter earliest time the job may run; null means now
 * @param attemptsAllowed attempts in all; 0 means the queue's default_attempts_allowed
 * @param idempotencyKey a repeat enqueue with this key returns the first job's id; empty: none
 * @param customStatus initial custom status; empty: none
 * @param orderingKey jobs of the queue with the same key run one at a time, in enqueue order;
 *     empty: none (see {@link #withOrderingKey})
 * @param traceparent the W3C traceparent stored with the job, which the worker continues the trace
 *     of (docs/tracing.md); null: the active OpenTelemetry span's, if any; empty: none
 */
public record JobSpec(
    String queue,
    byte[] body,
    int priority,
    Instant runAfter,
    int attemptsAllowed,
    String idempotencyKey,
    String customStatus,
    String orderingKey,
    String traceparent) {

  /** Validates only what Java can catch early; the server validates the rest. */
  public JobSpec {
    Objects.requireNonNull(queue, "queue");
    body = body == null ? new byte[0] : body;
    idempotencyKey = idempotencyKey == null ? "" : idempotencyKey;
    customStatus = customStatus == null ? "" : customStatus;
    orderingKey = orderingKey == null ? "" : orderingKey;
  }

  /** A job whose traceparent is the active span's (see {@link #withTraceparent}). */
  public JobSpec(
      String queue,
      byte[] body,
      int priority,
      Instant runAfter,
      int attemptsAllowed,
      String idempotencyKey,
      String customStatus,
      String orderingKey) {
    this(
        queue,
        body,
        priority,
        runAfter,
        attemptsAllowed,
        idempotencyKey,
        customStatus,
        orderingKey,
        null);
  }

  /** A job for {@code queue} with this body and every other field defaulted. */
  public static JobSpec of(String queue, byte[] body) {
    return new JobSpec(queue, body, 0, null, 0, "", "", "");
  }

  /** A job for {@code queue} whose body is {@code body} encoded as UTF-8. */
  public static JobSpec of(String queue, String body) {
    return of(queue, body.getBytes(StandardCharsets.UTF_8));
  }

  /** This job with another priority (1 is the highest). */
  public JobSpec withPriority(int priority) {
    return copy(c -> c.priority = priority);
  }

  /** This job, not to run before {@code runAfter}. */
  public JobSpec withRunAfter(Instant runAfter) {
    return copy(c -> c.runAfter = runAfter);
  }

  /** This job with {@code attemptsAllowed} attempts in all. */
  public JobSpec withAttemptsAllowed(int attemptsAllowed) {
    return copy(c -> c.attemptsAllowed = attemptsAllowed);
  }

  /** This job with an idempotency key. */
  public JobSpec withIdempotencyKey(String idempotencyKey) {
    return copy(c -> c.idempotencyKey = idempotencyKey);
  }

  /**
   * This job with an ordering key. Jobs of a queue that share an ordering key run one at a time, in
   * the order they were enqueued: the next one is handed out only after the one before it reached
   * SUCCEEDED or FAILED (or was deleted), and stays PENDING until then. A job that fails and is
   * retried keeps its place. Jobs with different keys run in parallel. At most 128 characters.
   * Ignored on FIFO queues, where the whole queue is one sequence.
   */
  public JobSpec withOrderingKey(String orderingKey) {
    return copy(c -> c.orderingKey = orderingKey);
  }

  /** This job with an initial custom status. */
  public JobSpec withCustomStatus(String customStatus) {
    return copy(c -> c.customStatus = customStatus);
  }

  /**
   * This job with the W3C traceparent {@code traceparent} ({@code 00-<trace id>-<span id>-<flags>})
   * instead of the active OpenTelemetry span's; empty stores none.
   */
  public JobSpec withTraceparent(String traceparent) {
    return copy(c -> c.traceparent = traceparent);
  }

  /** This job with {@code change} made to a copy of its fields: what every {@code with*} does. */
  private JobSpec copy(Consumer<Fields> change) {
    Fields c = new Fields(this);
    change.accept(c);
    return new JobSpec(
        c.queue,
        c.body,
        c.priority,
        c.runAfter,
        c.attemptsAllowed,
        c.idempotencyKey,
        c.customStatus,
        c.orderingKey,
        c.traceparent);
  }

  /** The fields of a job being copied, each open to one change. */
  private static final class Fields {
    String queue;
    byte[] body;
    int priority;
    Instant runAfter;
    int attemptsAllowed;
    String idempotencyKey;
    String customStatus;
    String orderingKey;
    String traceparent;

    Fields(JobSpec j) {
      queue = j.queue;
      body = j.body;
      priority = j.priority;
      runAfter = j.runAfter;
      attemptsAllowed = j.attemptsAllowed;
      idempotencyKey = j.idempotencyKey;
      customStatus = j.customStatus;
      orderingKey = j.orderingKey;
      traceparent = j.traceparent;
    }
  }
}
