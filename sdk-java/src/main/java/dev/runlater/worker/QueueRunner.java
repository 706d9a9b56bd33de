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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs one registered queue: poller threads that long-poll Dequeue for as many jobs as there are
 * free slots, up to a batch (piggy-backing pending acks), handlers on the shared pool, and an acker
 * thread that batches acks no poller has carried yet.
 *
 * <p>Slots: a job asked for by a Dequeue in flight, or handed out and not yet finished, holds one
 * of the queue's {@code concurrency} slots. A poller takes its slots before the call and gives back
 * those the answer did not fill, so all pollers together never ask for more jobs than there is room
 * for.
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

  /** Most jobs one Dequeue asks for. */
  private final int batchSize;

  /** Dequeue calls kept in flight at once, one poller thread each. */
  private final int pollerCount;

  /** Guards {@link #freeSlots}; pollers wait on it for room (or for stop). */
  private final Object slotLock = new Object();

  /** Slots neither asked for by a call in flight nor held by a job; guarded by slotLock. */
  private int freeSlots;

  private final BlockingQueue<Ack> pendingAcks = new LinkedBlockingQueue<>();
  private final Map<String, InFlight> inFlight = new ConcurrentHashMap<>();

  /**
   * Jobs whose ack is being sent again because the call carrying it failed. The first call may have
   * applied it (Dequeue applies its piggy-backed ack before waiting), so a STALE_CLAIM answer for
   * these is expected and not worth a warning.
   */
  private final Set<String> resent = ConcurrentHashMap.newKeySet();

  private volatile boolean stopping;
  private volatile boolean ackerStopping;

  /** Every Dequeue runs in it: cancelling it at stop cuts short all the long polls at once. */
  private final Context.CancellableContext polls = Context.ROOT.withCancellation();

  /** Counted down at stop: ends a poller's backoff early (pollers are never interrupted). */
  private final CountDownLatch stopSignal = new CountDownLatch(1);

  private ExecutorService executor;
  private final List<Thread> pollers = new ArrayList<>();
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
    this.freeSlots = concurrency;
    // The worker does not prefetch, so a batch is at most the concurrency.
    int batch = settings.batchSize() == 0 ? concurrency : settings.batchSize();
    this.batchSize = Math.min(MAX_BATCH, Math.min(batch, concurrency));
    // While one Dequeue travels, the slots its answer will not fill sit idle. With room for
    // several batches, keep that many calls in flight (at most 4, as the TypeScript worker
    // does); the slot accounting keeps them from asking for more than there is room for.
    this.pollerCount = Math.max(1, Math.min(4, concurrency / batchSize));
  }

  int concurrency() {
    return concurrency;
  }

  void start(ExecutorService executor) {
    this.executor = executor;
    for (int i = 1; i <= pollerCount; i++) {
      pollers.add(new Thread(this::pollLoop, "runlater-poll-" + queue + "-" + i));
    }
    acker = new Thread(this::ackLoop, "runlater-ack-" + queue);
    pollers.forEach(Thread::start);
    acker.start();
  }

  // ------------------------------------------------------------- polling

  private void pollLoop() {
    Duration backoff = Duration.ofMillis(100);
    while (true) {
      int n;
      try {
        n = takeSlots();
      } catch (InterruptedException e) {
        break; // the worker never interrupts pollers; whoever did wants this one gone
      }
      if (n == 0) {
        break; // stopping
      }
      // Whichever poller calls next carries the acks pending now; drainTo hands each ack to
      // exactly one caller.
      List<Ack> acks = drainAcks();
      String id = settings.workerId();
      DequeueResult result;
      try {
        // A Dequeue that carries acks does not long-poll, and close() does not cancel it: its
        // answer confirms them now. A long poll cut short would leave it unknown whether they
        // were applied, and they would have to be sent again (to come back STALE_CLAIM).
        result =
            acks.isEmpty()
                ? polls.call(() -> client.dequeue(queue, n, settings.pollWait(), id, acks))
                : client.dequeue(queue, n, Duration.ZERO, id, acks);
      } catch (Exception e) {
        giveBackSlots(n);
        // Whether a failed call applied its acks is unknown; resending is harmless (a repeat
        // comes back STALE_CLAIM), losing them would cost a retry.
        requeue(acks);
        if (stopping) {
          break;
        }
        LOG.log(Level.WARNING, "dequeue from " + queue + " failed; retrying in " + backoff, e);
        try {
          if (stopSignal.await(backoff.toMillis(), TimeUnit.MILLISECONDS)) {
            break;
          }
        } catch (InterruptedException ie) {
          break;
        }
        backoff =
            backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0
                ? MAX_BACKOFF
                : backoff.multipliedBy(2);
        continue;
      }
      backoff = Duration.ofMillis(100);
      logRefused("ack", result.ackOutcomes());
      // The slots the answer filled stay taken until each job's handler is done.
      giveBackSlots(n - result.jobs().size());
      for (DequeuedJob job : result.jobs()) {
        dispatch(job);
      }
    }
  }

  /**
   * Takes the slots for the next Dequeue: waits until one is free, then takes as many free ones as
   * a batch holds. Returns 0 once the runner is stopping.
   */
  private int takeSlots() throws InterruptedException {
    synchronized (slotLock) {
      while (freeSlots == 0 && !stopping) {
        slotLock.wait();
      }
      if (stopping) {
        return 0;
      }
      int n = Math.min(batchSize, freeSlots);
      freeSlots -= n;
      return n;
    }
  }

  /** Returns slots (a job finished, or a call came back short) and wakes waiting pollers. */
  private void giveBackSlots(int n) {
    if (n == 0) {
      return;
    }
    synchronized (slotLock) {
      freeSlots += n;
      slotLock.notifyAll();
    }
  }

  private void dispatch(DequeuedJob job) {
    InFlight f = new InFlight(job, Instant.now());
    if (stopping) {
      // Handed out while close() was cancelling the poll: give it straight back.
      release(List.of(f));
      giveBackSlots(1);
      return;
    }
    inFlight.put(job.jobId(), f);
    claimKeeper.track(f);
    try {
      executor.execute(() -> run(f));
    } catch (RejectedExecutionException e) {
      inFlight.remove(job.jobId());
      release(List.of(f));
      giveBackSlots(1);
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
      // Given back after the ack is queued, so a poller waiting for this slot carries the ack.
      giveBackSlots(1);
    }
  }

  private Ack failure(DequeuedJob job, Throwable error) {
    String status =
        truncate(error.getMessage() == null ? error.getClass().getName() : error.getMessage());
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
          client.checkpoint(
              queue, List.of(Checkpoint.moveToPending(job, Instant.now().plus(delay))));
      logRefused("snooze", out);
    } catch (RunlaterException e) {
      // The claim will time out and the job will run again: at-least-once still holds.
      LOG.log(Level.WARNING, "snoozing job " + job.jobId() + " failed", e);
    }
  }

  /** Sleeps; false if interrupted (the flag is kept). */
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
          LOG.log(
              Level.WARNING, "dropping " + batch.size() + " acks of " + queue + " at shutdown", e);
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

  /**
   * Stops taking jobs: cancels every long poll in flight (a call started later fails at once), and
   * wakes pollers waiting for a slot or backing off. Pollers are not interrupted: one that just got
   * jobs must still be able to release them.
   */
  void stopPolling() {
    synchronized (slotLock) {
      stopping = true;
      slotLock.notifyAll();
    }
    stopSignal.countDown();
    polls.cancel(null);
  }

  /** Waits up to {@code timeout} in all for the pollers to leave. */
  void awaitPollers(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Thread p : pollers) {
      p.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }
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
