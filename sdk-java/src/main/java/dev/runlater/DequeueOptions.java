package dev.runlater;

import java.time.Duration;
import java.util.List;

/**
 * Options of {@link RunlaterClient#dequeue(String, DequeueOptions)}: how many jobs, how long to
 * long-poll, who asks, and the previous batch's acks to apply first. Build with {@link #builder()};
 * {@code RunlaterClient.dequeue(queue, limit, wait)} covers the common case.
 *
 * @param limit at most this many jobs, up to 1,000 (more is refused by the server with {@code
 *     BATCH_TOO_LARGE}); default 1, and 0 means 1
 * @param maxWait long-poll time when no job is due; zero returns at once (default), at most 60 s
 * @param workerId free text naming the worker, for the server's logs; empty: none
 * @param acks outcomes of earlier jobs of the same queue, applied before taking new ones
 */
public record DequeueOptions(int limit, Duration maxWait, String workerId, List<Ack> acks) {
  /**
   * Checks the values and normalises null to the defaults.
   *
   * @throws IllegalArgumentException for a negative limit or wait
   */
  public DequeueOptions {
    Args.requireNotNegative("limit", limit);
    maxWait = maxWait == null ? Duration.ZERO : maxWait;
    if (maxWait.isNegative()) {
      throw new IllegalArgumentException("maxWait must not be negative, got " + maxWait);
    }
    workerId = workerId == null ? "" : workerId;
    acks = acks == null ? List.of() : List.copyOf(acks);
  }

  /** A builder at the defaults: one job, no wait, no worker id, no acks. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds {@link DequeueOptions}. */
  public static final class Builder {
    private int limit = 1;
    private Duration maxWait = Duration.ZERO;
    private String workerId = "";
    private List<Ack> acks = List.of();

    private Builder() {}

    /** At most this many jobs (up to 1,000). */
    public Builder limit(int limit) {
      this.limit = limit;
      return this;
    }

    /** Long-polls up to {@code maxWait} when no job is due (at most 60 s). */
    public Builder maxWait(Duration maxWait) {
      this.maxWait = maxWait;
      return this;
    }

    /** Names the worker in the server's logs. */
    public Builder workerId(String workerId) {
      this.workerId = workerId;
      return this;
    }

    /**
     * Applies these outcomes of the previous batch first, in the same call. A call that carries
     * acks does not long-poll in the worker: its answer confirms them at once.
     */
    public Builder acks(List<Ack> acks) {
      this.acks = acks;
      return this;
    }

    /**
     * The options.
     *
     * @throws IllegalArgumentException for a negative limit or wait
     */
    public DequeueOptions build() {
      return new DequeueOptions(limit, maxWait, workerId, acks);
    }
  }
}
