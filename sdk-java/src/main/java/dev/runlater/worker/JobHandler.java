package dev.runlater.worker;

import dev.runlater.DequeuedJob;

/**
 * Runs one job of a queue. The control-flow vocabulary is shared with the TypeScript and Python
 * SDKs:
 *
 * <ul>
 *   <li>return {@link JobResult#success()} (or null): success;
 *   <li>return {@link JobResult#success(String)}: success, the text appended to the job's custom
 *       status;
 *   <li>return {@link JobResult#snooze(java.time.Duration)}: put the job back to PENDING, due after
 *       the delay, charging no attempt;
 *   <li>throw {@link RetryAfter}: failure, retried after the given delay;
 *   <li>throw {@link DoNotRetry}: failure, no retry whatever attempts are left;
 *   <li>throw anything else: failure; the delay comes from the worker's {@link RetryPolicy} if one
 *       is set, else from the queue's policy. The message goes to the custom status.
 * </ul>
 *
 * <p>Handlers run on the worker's thread pool. When the worker closes and the grace period has
 * passed, the thread is interrupted and the job is released back to PENDING; whatever the handler
 * returns after that is ignored.
 */
@FunctionalInterface
public interface JobHandler {
  /**
   * Runs the job.
   *
   * @param job the dequeued job
   * @return the outcome; null means {@link JobResult#success()}
   * @throws Exception to report a failed attempt
   */
  JobResult handle(DequeuedJob job) throws Exception;
}
