package dev.runlater.worker;

import dev.runlater.AckOutcome;
import dev.runlater.Checkpoint;
import dev.runlater.JobOutcome;
import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Keeps the claims of running jobs alive (PinLater's heartbeat), as the TypeScript and Python
 * workers do: a claim is renewed once half its lifetime has passed, by a Checkpoint carrying only
 * the job id and claim token (which renews it for the queue's claim timeout). One timer for all the
 * worker's claims, and one batched Checkpoint per queue for every claim due at that moment (claims
 * due within the next quarter of their lifetime ride along): many long jobs cost one call per
 * round, not one call and one scheduled task per job.
 *
 * <p>A claim's lifetime is read once, when its job arrives (the worker's clock against {@code
 * claim_expires_at}, see {@link InFlight}); renewals are timed on {@link System#nanoTime()}, so a
 * wall clock that jumps, or stands still (a server on a manual clock), never delays one.
 */
final class ClaimKeeper {
  private static final System.Logger LOG = System.getLogger(ClaimKeeper.class.getName());

  /** Renewing more often than this buys nothing and floods the server. */
  private static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** Most checkpoints the server takes in one call. */
  private static final int BATCH_MAX = 1000;

  private final RunlaterClient client;
  private final ScheduledExecutorService scheduler;
  private final Map<InFlight, Boolean> claims = new ConcurrentHashMap<>();

  // Guarded by this.
  private ScheduledFuture<?> timer;
  private long timerAt = Long.MAX_VALUE;

  ClaimKeeper(RunlaterClient client, ScheduledExecutorService scheduler) {
    this.client = client;
    this.scheduler = scheduler;
  }

  /** Starts renewing {@code f}'s claim until {@link #untrack}. */
  void track(InFlight f) {
    if (f.claimLifetime.isZero()) {
      return; // No expiry given: nothing to renew.
    }
    f.renewedFor(System.nanoTime());
    claims.put(f, Boolean.TRUE);
    arm(f.renewAt);
  }

  /** The job is done (or released): its claim is no longer renewed. */
  void untrack(InFlight f) {
    claims.remove(f);
  }

  private synchronized void arm(long at) {
    if (at >= timerAt) {
      return;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    timerAt = at;
    try {
      long delay = Math.max(MIN_DELAY_NANOS, at - System.nanoTime());
      timer = scheduler.schedule(this::renewDue, delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      timer = null; // The worker is shutting down; its jobs are about to be settled or released.
      timerAt = Long.MAX_VALUE;
    }
  }

  private void rearm() {
    long next = Long.MAX_VALUE;
    for (InFlight f : claims.keySet()) {
      if (!f.renewing && f.renewAt < next) {
        next = f.renewAt;
      }
    }
    if (next != Long.MAX_VALUE) {
      arm(next);
    }
  }

  private void renewDue() {
    synchronized (this) {
      timer = null;
      timerAt = Long.MAX_VALUE;
    }
    long now = System.nanoTime();
    // Due now, or within the next quarter of its lifetime: renew those together, per queue.
    Map<String, List<InFlight>> due = new LinkedHashMap<>();
    for (InFlight f : claims.keySet()) {
      if (!f.renewing && f.renewAt - now <= (f.expiresAt - f.renewAt) / 2) {
        f.renewing = true;
        due.computeIfAbsent(f.job.queue(), q -> new ArrayList<>()).add(f);
      }
    }
    for (Map.Entry<String, List<InFlight>> e : due.entrySet()) {
      List<InFlight> all = e.getValue();
      for (int i = 0; i < all.size(); i += BATCH_MAX) {
        renew(e.getKey(), all.subList(i, Math.min(all.size(), i + BATCH_MAX)));
      }
    }
    rearm();
  }

  private void renew(String queue, List<InFlight> batch) {
    long sentAt = System.nanoTime();
    List<Checkpoint> checkpoints = new ArrayList<>(batch.size());
    for (InFlight f : batch) {
      checkpoints.add(Checkpoint.renew(f.job));
    }
    List<JobOutcome> out;
    try {
      out = client.checkpoint(queue, checkpoints);
    } catch (RunlaterException e) {
      // Try again soon, well before the expiry if there is time left: a blip should not cost the
      // claim; if it has run out, the answer to the next try says whether it is lost.
      LOG.log(
          Level.WARNING,
          "renewing the claims of " + batch.size() + " jobs of " + queue + " failed; retrying",
          e);
      long failedAt = System.nanoTime();
      for (InFlight f : batch) {
        long left = f.expiresAt - failedAt;
        f.renewAt = failedAt + (left > 0 ? left / 4 : TimeUnit.MILLISECONDS.toNanos(500));
        f.renewing = false;
      }
      return;
    }
    for (int i = 0; i < batch.size(); i++) {
      InFlight f = batch.get(i);
      AckOutcome outcome = i < out.size() ? out.get(i).outcome() : AckOutcome.NOT_FOUND;
      if (outcome == AckOutcome.ACKNOWLEDGED) {
        // Renewed for the queue's claim timeout, counted from the request.
        f.renewedFor(sentAt);
        f.renewing = false;
      } else if (claims.remove(f) != null) {
        LOG.log(
            Level.WARNING,
            "claim of job {0} could not be renewed ({1}); its outcome will be refused",
            f.job.jobId(),
            outcome);
      }
    }
  }
}
