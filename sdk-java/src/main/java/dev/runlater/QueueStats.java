package dev.runlater;

import java.time.Duration;

/**
 * A queue's live counts.
 *
 * @param pending PENDING jobs, due or scheduled
 * @param scheduled PENDING jobs whose run_after is in the future
 * @param running RUNNING jobs
 * @param succeeded SUCCEEDED jobs still retained
 * @param failed FAILED jobs still retained
 * @param oldestPendingAge how long the oldest due PENDING job has been due (zero when none is)
 */
public record QueueStats(
    long pending,
    long scheduled,
    long running,
    long succeeded,
    long failed,
    Duration oldestPendingAge) {}
