package dev.runlater.worker;

import dev.runlater.AckOutcome;
import dev.runlater.Checkpoint;
import dev.runlater.JobOutcome;
import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps claims of long-running jobs alive: when half of a claim's lifetime has passed it sends a
 * bare Checkpoint (job id and claim token), which renews the claim for the queue's claim timeout.
 */
final class ClaimKeeper {
  private static final System.Logger LOG = System.getLogger(ClaimKeeper.class.getName());

  private final RunlaterClient client;
  private final ScheduledExecutorService scheduler;

  ClaimKeeper(RunlaterClient client, ScheduledExecutorService scheduler) {
    this.client = client;
    this.scheduler = scheduler;
  }

  /** Starts renewing {@code f}'s claim until it is settled. */
  void track(InFlight f) {
    if (f.claimLifetime.isZero()) {
      return; // No expiry given: nothing to renew.
    }
    schedule(f, f.claimLifetime.dividedBy(2));
  }

  private void schedule(InFlight f, Duration delay) {
    try {
      f.renewal = scheduler.schedule(() -> renew(f), delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // The worker is shutting down; the job is about to be settled or released.
    }
    if (f.isSettled() && f.renewal != null) {
      f.renewal.cancel(false); // settled between the check and the schedule
    }
  }

  private void renew(InFlight f) {
    if (f.isSettled()) {
      return;
    }
    try {
      List<JobOutcome> out = client.checkpoint(f.job.queue(), List.of(Checkpoint.renew(f.job)));
      AckOutcome outcome = out.isEmpty() ? AckOutcome.NOT_FOUND : out.get(0).outcome();
      if (outcome == AckOutcome.ACKNOWLEDGED) {
        // The server does not say the new expiry; it is now + claim timeout ≥ now + lifetime.
        schedule(f, f.claimLifetime.dividedBy(2));
      } else {
        LOG.log(
            Level.WARNING,
            "claim of job {0} could not be renewed ({1}); its outcome will be refused",
            f.job.jobId(),
            outcome);
      }
    } catch (RunlaterException e) {
      // Try again soon: a short blip should not cost the claim.
      LOG.log(Level.WARNING, "renewing claim of job " + f.job.jobId() + " failed; retrying", e);
      Duration retry = f.claimLifetime.dividedBy(8);
      schedule(f, retry.compareTo(Duration.ofSeconds(1)) > 0 ? Duration.ofSeconds(1) : retry);
    }
  }
}
