package dev.runlater.worker;

import dev.runlater.Ack;
import dev.runlater.AckOutcome;
import dev.runlater.Checkpoint;
import dev.runlater.DequeueResult;
import dev.runlater.DequeuedJob;
import dev.runlater.JobOutcome;
import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import io.grpc.Context;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Runs one registered queue: a poller thread that long-polls Dequeue for as many jobs as there
 * are free slots (piggy-backing pending acks), handlers on the shared pool, and an acker thread
 * that batches acks the poller has not carried yet.
 */
final class QueueRunner {
  private static final System.Logger LOG = System.getLogger(QueueRunner.class.getName());
  private static final int MAX_STATUS_CHARS = 500;
  private static final int MAX_BATCH = 1000;
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  private final RunlaterClient client;
  private final String queue;
  private final JobHandler handler;
  private final int concurrency;
  private final Worker.Settings settings;
  private final ClaimKeeper claimKeeper;

  /** One permit per free handler slot of this queue. */
  private final Semaphore slots;

  private final BlockingQueue<Ack> pendingAcks = new LinkedBlockingQueue<>();
  private final Map<String, InFlight> inFlight = new ConcurrentHashMap<>();

  /**
   * Jobs whose ack is being sent again because the call carrying it failed. The first call may
   * have applied it (Dequeue applies its piggy-backed ack before waiting), so a STALE_CLAIM
   * answer for these is expected and not worth a warning.
   */
  private final Set<String> resent = ConcurrentHashMap.newKeySet();

  private volatile boolean stopping;
  private volatile boolean ackerStopping;
  private volatile Context.CancellableContext currentPoll;
  private ExecutorService executor;
  private Thread poller;
  private Thread acker;

  QueueRunner(
      RunlaterClient client,
      String queue,
      JobHandler handler,
      int concurrency,
      Worker.Settings settings,
      ClaimKeeper claimKeeper) {
    this.client = client;
    this.queue = queue;
    this.handler = handler;
    this.concurrency = concurrency;
    this.settings = settings;
    this.claimKeeper = claimKeeper;
    this.slots = new Semaphore(concurrency);
  }

  int concurrency() {
    return concurrency;
  }

  void start(ExecutorService executor) {
    this.executor = executor;
    poller = new Thread(this::pollLoop, "runlater-poll-" + queue);
    acker = new Thread(this::ackLoop, "runlater-ack-" + queue);
    poller.start();
    acker.start();
  }

  // ------------------------------------------------------------- polling

  private void pollLoop() {
    Duration backoff = Duration.ofMillis(100);
    while (!stopping) {
      int n;
      try {
        slots.acquire();
      } catch (InterruptedException e) {
        break; // close() interrupts a poller waiting for a slot
      }
      n = 1 + slots.drainPermits();
      if (n > MAX_BATCH) {
        slots.release(n - MAX_BATCH);
        n = MAX_BATCH;
      }
      List<Ack> acks = drainAcks();
      DequeueResult result;
      Context.CancellableContext ctx = Context.current().withCancellation();
      currentPoll = ctx;
      try {
        if (stopping) {
          throw new InterruptedException();
        }
        int limit = n;
        result =
            ctx.call(() -> client.dequeue(queue, limit, settings.pollWait(), settings.workerId(), acks));
      } catch (Exception e) {
        slots.release(n);
        // Whether a failed call applied its acks is unknown; resending is harmless (a repeat
        // comes back STALE_CLAIM), losing them would cost a retry.
        requeue(acks);
        if (stopping) {
          break;
        }
        LOG.log(Level.WARNING, "dequeue from " + queue + " failed; retrying in " + backoff, e);
        if (!sleep(backoff)) {
          break;
        }
        backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
        continue;
      } finally {
        currentPoll = null;
        ctx.cancel(null);
      }
      backoff = Duration.ofMillis(100);
      logRefused("ack", result.ackOutcomes());
      slots.release(n - result.jobs().size());
      for (DequeuedJob job : result.jobs()) {
        dispatch(job);
      }
    }
  }

  private void dispatch(DequeuedJob job) {
    InFlight f = new InFlight(job, Instant.now());
    if (stopping) {
      // Handed out while close() was cancelling the poll: give it straight back.
      release(List.of(f));
      slots.release();
      return;
    }
    inFlight.put(job.jobId(), f);
    claimKeeper.track(f);
    try {
      executor.execute(() -> run(f));
    } catch (RejectedExecutionException e) {
      inFlight.remove(job.jobId());
      release(List.of(f));
      slots.release();
    }
  }

  // ------------------------------------------------------------ handling

  private void run(InFlight f) {
    DequeuedJob job = f.job;
    JobResult result = null;
    Throwable error = null;
    try {
      result = handler.handle(job);
    } catch (Throwable t) {
      error = t;
    }
    try {
      if (!f.settle()) {
        return; // close() released the job after the grace period: its outcome no longer counts
      }
      if (error != null) {
        pendingAcks.add(failure(job, error));
      } else if (result != null && result.isSnooze()) {
        snooze(job, result.snoozeFor());
      } else {
        pendingAcks.add(Ack.success(job, result == null ? "" : result.customStatus()));
      }
    } finally {
      inFlight.remove(job.jobId());
      // Released after the ack is queued, so a poller waiting for this slot carries the ack.
      slots.release();
    }
  }

  private Ack failure(DequeuedJob job, Throwable error) {
    String status = truncate(error.getMessage() == null ? error.getClass().getName() : error.getMessage());
    if (error instanceof RetryAfter r) {
      return Ack.failure(job, status, r.delay(), false);
    }
    if (error instanceof DoNotRetry) {
      return Ack.failure(job, status, null, true);
    }
    LOG.log(Level.DEBUG, "job " + job.jobId() + " of " + queue + " failed", error);
    RetryPolicy policy = settings.retryPolicy();
    Duration delay = policy == null ? null : policy.delayAfter(job.attempt());
    return Ack.failure(job, status, delay, false);
  }

  private void snooze(DequeuedJob job, Duration delay) {
    try {
      List<JobOutcome> out =
          client.checkpoint(queue, List.of(Checkpoint.moveToPending(job, Instant.now().plus(delay))));
      logRefused("snooze", out);
    } catch (RunlaterException e) {
      // The claim will time out and the job will run again: at-least-once still holds.
      LOG.log(Level.WARNING, "snoozing job " + job.jobId() + " failed", e);
    }
  }

  /** Sleeps; false if interrupted (the poller is being stopped). */
  private static boolean sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static String truncate(String s) {
    return s.length() <= MAX_STATUS_CHARS ? s : s.substring(0, MAX_STATUS_CHARS - 1) + "…";
  }

  // -------------------------------------------------------------- acking

  private void ackLoop() {
    while (true) {
      Ack first;
      try {
        first = pendingAcks.poll(50, TimeUnit.MILLISECONDS);
        if (first == null) {
          if (ackerStopping) {
            return;
          }
          continue;
        }
        if (!ackerStopping) {
          Thread.sleep(settings.ackLinger().toMillis()); // let a few more acks join the batch
        }
      } catch (InterruptedException e) {
        return;
      }
      List<Ack> batch = new ArrayList<>();
      batch.add(first);
      pendingAcks.drainTo(batch, MAX_BATCH - 1);
      try {
        logRefused("ack", client.ack(queue, batch));
      } catch (RunlaterException e) {
        if (ackerStopping) {
          // Giving up: these claims will time out and the jobs run again (at-least-once).
          LOG.log(Level.WARNING, "dropping " + batch.size() + " acks of " + queue + " at shutdown", e);
          continue;
        }
        LOG.log(Level.WARNING, "ack to " + queue + " failed; retrying", e);
        requeue(batch);
        sleep(Duration.ofMillis(200));
      }
    }
  }

  private void requeue(List<Ack> acks) {
    for (Ack a : acks) {
      resent.add(a.jobId());
    }
    pendingAcks.addAll(acks);
  }

  private List<Ack> drainAcks() {
    List<Ack> acks = new ArrayList<>();
    pendingAcks.drainTo(acks, MAX_BATCH);
    return acks;
  }

  private void logRefused(String what, List<JobOutcome> outcomes) {
    for (JobOutcome o : outcomes) {
      boolean wasResent = resent.remove(o.jobId());
      if (wasResent && o.outcome() == AckOutcome.STALE_CLAIM) {
        LOG.log(Level.DEBUG, "resent {0} of job {1} was already applied", what, o.jobId());
      } else if (o.outcome() != AckOutcome.ACKNOWLEDGED) {
        LOG.log(Level.WARNING, "{0} of job {1} refused: {2}", what, o.jobId(), o.outcome());
      }
    }
  }

  // ------------------------------------------------------------ shutdown

  /** Stops taking jobs: cancels a long poll in flight and wakes a poller waiting for a slot. */
  void stopPolling() {
    stopping = true;
    Context.CancellableContext ctx = currentPoll;
    if (ctx != null) {
      ctx.cancel(null);
    }
    poller.interrupt();
  }

  void awaitPoller(Duration timeout) throws InterruptedException {
    poller.join(Math.max(1, timeout.toMillis()));
  }

  /** Releases the jobs still running (after the grace period) back to PENDING, uncharged. */
  void releaseInFlight() {
    List<InFlight> toRelease = new ArrayList<>();
    for (InFlight f : inFlight.values()) {
      if (f.settle()) {
        toRelease.add(f);
      }
    }
    release(toRelease);
  }

  private void release(List<InFlight> jobs) {
    if (jobs.isEmpty()) {
      return;
    }
    List<Checkpoint> checkpoints = new ArrayList<>();
    for (InFlight f : jobs) {
      checkpoints.add(Checkpoint.moveToPending(f.job, null));
    }
    try {
      logRefused("release", client.checkpoint(queue, checkpoints));
    } catch (RunlaterException e) {
      LOG.log(Level.WARNING, "releasing " + jobs.size() + " jobs of " + queue + " failed", e);
    }
  }

  /** Flushes the acks still pending, then stops the acker. */
  void stopAcker(Duration timeout) throws InterruptedException {
    ackerStopping = true;
    acker.join(Math.max(1, timeout.toMillis()));
  }
}
