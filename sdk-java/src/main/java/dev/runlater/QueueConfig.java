package dev.runlater;

import java.time.Duration;

/**
 * A queue's settings. Every field is nullable: in {@link RunlaterClient#createQueue} null takes the
 * server's default, in {@link RunlaterClient#updateQueue} only the non-null fields change. Queues
 * the server returns have every field filled in. Build with {@link #builder()}.
 *
 * @param priorities priority levels, 1 (highest) to this; default 3, at most 10
 * @param claimTimeout how long a worker holds a job before the claim expires; default 5 min, at
 *     least 100 ms
 * @param retryPolicy delay between attempts; see {@link QueueRetryPolicy}
 * @param defaultAttemptsAllowed attempts for a job that says 0; default 11
 * @param maxDequeuePerSecond rate limit on jobs handed out; 0 means unlimited
 * @param paused a paused queue accepts enqueues and acks but hands out nothing
 * @param succeededRetention how long SUCCEEDED jobs are kept; default 1 day
 * @param failedRetention how long FAILED jobs are kept; default 7 days
 * @param fifo strict enqueue order: one partition, one job at a time in the order enqueued,
 *     whatever the priorities (ordering keys are ignored); fixed at create
 * @param partitions number of partitions; default 1; may grow later, never shrink
 * @param maxBodyBytes largest body accepted; default 1 MiB
 */
public record QueueConfig(
    Integer priorities,
    Duration claimTimeout,
    QueueRetryPolicy retryPolicy,
    Integer defaultAttemptsAllowed,
    Double maxDequeuePerSecond,
    Boolean paused,
    Duration succeededRetention,
    Duration failedRetention,
    Boolean fifo,
    Integer partitions,
    Integer maxBodyBytes) {

  /** A config with every field unset (all defaults). */
  public static QueueConfig defaults() {
    return builder().build();
  }

  /** A builder with every field unset. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link QueueConfig}; fields left alone stay null (unset). */
  public static final class Builder {
    private Integer priorities;
    private Duration claimTimeout;
    private QueueRetryPolicy retryPolicy;
    private Integer defaultAttemptsAllowed;
    private Double maxDequeuePerSecond;
    private Boolean paused;
    private Duration succeededRetention;
    private Duration failedRetention;
    private Boolean fifo;
    private Integer partitions;
    private Integer maxBodyBytes;

    private Builder() {}

    /** Priority levels, 1 (highest) to {@code n}. */
    public Builder priorities(int n) {
      this.priorities = n;
      return this;
    }

    /** How long a worker holds a job before the claim expires (at least 100 ms). */
    public Builder claimTimeout(Duration d) {
      this.claimTimeout = d;
      return this;
    }

    /** Delay between attempts. */
    public Builder retryPolicy(QueueRetryPolicy p) {
      this.retryPolicy = p;
      return this;
    }

    /** Attempts a job gets when its spec says 0. */
    public Builder defaultAttemptsAllowed(int n) {
      this.defaultAttemptsAllowed = n;
      return this;
    }

    /** Rate limit on jobs handed out, per second; 0 means unlimited. */
    public Builder maxDequeuePerSecond(double rate) {
      this.maxDequeuePerSecond = rate;
      return this;
    }

    /** Pause or resume handing out jobs. */
    public Builder paused(boolean paused) {
      this.paused = paused;
      return this;
    }

    /** How long SUCCEEDED jobs are kept. */
    public Builder succeededRetention(Duration d) {
      this.succeededRetention = d;
      return this;
    }

    /** How long FAILED jobs are kept. */
    public Builder failedRetention(Duration d) {
      this.failedRetention = d;
      return this;
    }

    /** Strict enqueue order, one job at a time, priorities ignored (fixed at create). */
    public Builder fifo(boolean fifo) {
      this.fifo = fifo;
      return this;
    }

    /** Number of partitions (may grow with updateQueue, never shrink). */
    public Builder partitions(int n) {
      this.partitions = n;
      return this;
    }

    /** Largest body accepted, in bytes. */
    public Builder maxBodyBytes(int n) {
      this.maxBodyBytes = n;
      return this;
    }

    /** The config. */
    public QueueConfig build() {
      return new QueueConfig(
          priorities,
          claimTimeout,
          retryPolicy,
          defaultAttemptsAllowed,
          maxDequeuePerSecond,
          paused,
          succeededRetention,
          failedRetention,
          fifo,
          partitions,
          maxBodyBytes);
    }
  }
}
