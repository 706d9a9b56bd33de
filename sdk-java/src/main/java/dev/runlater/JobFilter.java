package dev.runlater;

import java.util.Objects;

/**
 * Filters for scanning, counting and deleting a queue's jobs; they combine with AND. Start with
 * {@link #queue(String)}.
 *
 * @param queue queue (required)
 * @param state only jobs in this state; null means every state
 * @param priority only jobs of this priority; 0 means every priority
 * @param future null: every job; true: only run_after in the future; false: only due jobs
 * @param bodyRegex only bodies matching this (JavaScript-syntax) regular expression; empty: all
 */
public record JobFilter(
    String queue, JobState state, int priority, Boolean future, String bodyRegex) {

  /** Normalises null text to empty. */
  public JobFilter {
    Objects.requireNonNull(queue, "queue");
    bodyRegex = bodyRegex == null ? "" : bodyRegex;
  }

  /** Every job of {@code queue}. */
  public static JobFilter queue(String queue) {
    return new JobFilter(queue, null, 0, null, "");
  }

  /** Only jobs in {@code state}. */
  public JobFilter withState(JobState state) {
    return new JobFilter(queue, state, priority, future, bodyRegex);
  }

  /** Only jobs of {@code priority}. */
  public JobFilter withPriority(int priority) {
    return new JobFilter(queue, state, priority, future, bodyRegex);
  }

  /** Only future (true) or only due (false) jobs. */
  public JobFilter withFuture(boolean future) {
    return new JobFilter(queue, state, priority, future, bodyRegex);
  }

  /** Only jobs whose body, read as UTF-8, matches {@code bodyRegex}. */
  public JobFilter withBodyRegex(String bodyRegex) {
    return new JobFilter(queue, state, priority, future, bodyRegex);
  }
}
