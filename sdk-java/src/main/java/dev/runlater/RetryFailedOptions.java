package dev.runlater;

import java.time.Instant;

/**
 * Options of {@link RunlaterClient#retryFailedJobs(String, RetryFailedOptions)}: which FAILED jobs
 * move back to PENDING, and how. Build with {@link #builder()}; zero and null mean "every" or "the
 * default".
 *
 * @param priority only jobs of this priority; 0: every priority
 * @param attemptsAllowed attempts the retried jobs get; 0: the queue's default
 * @param runAfter when they become due; null: now
 * @param limit at most this many, oldest failures first; 0: the server's default (1,000)
 */
public record RetryFailedOptions(int priority, int attemptsAllowed, Instant runAfter, int limit) {

  /**
   * Checks that no number is negative.
   *
   * @throws IllegalArgumentException naming the first negative field
   */
  public RetryFailedOptions {
    Args.requireNotNegative("priority", priority);
    Args.requireNotNegative("attemptsAllowed", attemptsAllowed);
    Args.requireNotNegative("limit", limit);
  }

  /** A builder at the defaults: every priority, the queue's attempts, due now, server's limit. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds {@link RetryFailedOptions}. */
  public static final class Builder {
    private int priority;
    private int attemptsAllowed;
    private Instant runAfter;
    private int limit;

    private Builder() {}

    /** Retries only jobs of this priority. */
    public Builder priority(int priority) {
      this.priority = priority;
      return this;
    }

    /** Gives each retried job this many attempts in all. */
    public Builder attemptsAllowed(int attemptsAllowed) {
      this.attemptsAllowed = attemptsAllowed;
      return this;
    }

    /** Makes the retried jobs due at {@code runAfter} instead of now. */
    public Builder runAfter(Instant runAfter) {
      this.runAfter = runAfter;
      return this;
    }

    /** Retries at most this many jobs, oldest failures first. */
    public Builder limit(int limit) {
      this.limit = limit;
      return this;
    }

    /**
     * The options.
     *
     * @throws IllegalArgumentException naming the first negative field
     */
    public RetryFailedOptions build() {
      return new RetryFailedOptions(priority, attemptsAllowed, runAfter, limit);
    }
  }
}
