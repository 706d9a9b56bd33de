package dev.runlater.worker;

import dev.runlater.Ack;
import dev.runlater.Checkpoint;
import dev.runlater.DequeuedJob;
import dev.runlater.JobOutcome;
import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;

/**
 * Runs one registered queue: a {@link Puller} takes jobs (a {@link StreamPuller}, or a {@link
 * Poller} in poll mode and as the fallback), handlers run on the worker's pool, an {@link
 * AckBatcher} gets their outcomes to the server. Each job holds one of the queue's {@link Slots}
 * from the moment it is asked for until its handler is done.
 */
final class QueueRunner {
  private static final System.Logger LOG = System.getLogger(QueueRunner.class.getName());
  private static final int MAX_STATUS_CHARS = 500;
  private static final int MAX_BATCH = 1000;

  /** The latest time a protobuf Timestamp holds. */
  private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

  private final RunlaterClient client;
  private final String queue;
  private final JobHandler handler;
  private final Worker.Settings settings;
  private final ClaimKeeper claimKeeper;
  private final Slots slots;
  private final AckBatcher acks;
  private final Puller.Setup setup;
  private final Puller puller;
  private final Map<String, InFlight> inFlight = new ConcurrentHashMap<>();

  private volatile boolean stopping;
  private ExecutorService executor;

  /** The poller that took over when the server turned the stream down; guarded by this. */
  private Poller fallback;

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
    this.settings = settings;
    this.claimKeeper = claimKeeper;
    this.slots = new Slots(concurrency);
    this.acks = new AckBatcher(client, queue, settings.ackDelay());
    // The worker does not prefetch, so a batch is at most the concurrency.
    int batch = settings.batchSize() == 0 ? concurrency : settings.batchSize();
    int batchSize = Math.min(MAX_BATCH, Math.min(batch, concurrency));
    this.setup =
        new Puller.Setup(
            client, queue, settings.workerId(), slots, acks, batchSize, this::dispatch);
    if (settings.dequeueMode() == DequeueMode.STREAM) {
      StreamPuller stream = new StreamPuller(setup, this::fallBackToPolling);
      acks.carrier(stream::carryAcks);
      this.puller = stream;
    } else {
      this.puller = new Poller(setup, settings.pollWait());
    }
  }

  int concurrency() {
    return slots.total();
  }

  void start(ExecutorService executor) {
    this.executor = executor;
    puller.start();
    acks.start();
  }

  /** The server does not offer DequeueStream: take this queue's jobs with Dequeue calls. */
  private synchronized void fallBackToPolling() {
    if (!stopping) {
      fallback = new Poller(setup, settings.pollWait());
      fallback.start();
    }
  }

  /** Runs a job handed out; its slot stays held until the handler is done. */
  private void dispatch(DequeuedJob job) {
    InFlight f = new InFlight(job, settings.clock().instant());
    if (stopping) {
      // Handed out while close() was stopping the puller: give it straight back.
      release(List.of(f));
      jobDone();
      return;
    }
    inFlight.put(job.jobId(), f);
    claimKeeper.track(f);
    try {
      executor.execute(() -> run(f));
    } catch (RejectedExecutionException e) {
      inFlight.remove(job.jobId());
      claimKeeper.untrack(f);
      release(List.of(f));
      jobDone();
    }
  }

  private void jobDone() {
    slots.giveBack(1);
    puller.poke();
  }

  // ------------------------------------------------------------ handling

  private void run(InFlight f) {
    DequeuedJob job = f.job;
    JobResult result = null;
    Throwable error = null;
    try {
      result = ProcessSpan.run(queue, job, handler);
    } catch (Throwable t) {
      error = t;
    }
    claimKeeper.untrack(f);
    try {
      if (!f.settle()) {
        return; // close() released the job after the grace period: its outcome no longer counts
      }
      if (error != null) {
        acks.add(failure(job, error));
      } else if (result != null && result.isSnooze()) {
        snooze(job, result.snoozeFor(), result.customStatus());
      } else {
        acks.add(
            result == null
                ? Ack.success(job)
                : Ack.success(job, result.customStatus(), result.result(), result.noEvents()));
      }
    } finally {
      inFlight.remove(job.jobId());
      // Given back after the ack is queued, so whoever takes the slot carries the ack.
      jobDone();
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
    // RetryAfter and DoNotRetry are decisions; anything else is an accident worth a stack trace.
    LOG.log(
        Level.WARNING,
        "job "
            + job.jobId()
            + " of "
            + queue
            + " failed (attempt "
            + job.attempt()
            + " of "
            + job.attemptsAllowed()
            + ")",
        error);
    RetryPolicy policy = settings.retryPolicy();
    Duration delay = policy == null ? null : policy.delayAfter(job.attempt());
    return Ack.failure(job, status, delay, false);
  }

  private void snooze(DequeuedJob job, Duration delay, String customStatus) {
    Instant runAfter;
    try {
      runAfter = settings.clock().instant().plus(delay);
      if (runAfter.isAfter(LATEST)) {
        runAfter = LATEST;
      }
    } catch (java.time.DateTimeException | ArithmeticException e) {
      runAfter = LATEST; // past what an Instant holds: as good as never
    }
    try {
      List<JobOutcome> out =
          client.checkpoint(
              queue,
              List.of(
                  Checkpoint.moveToPending(job, runAfter)
                      .withCustomStatus(truncate(customStatus))));
      acks.checkResults("snooze", out);
    } catch (RunlaterException e) {
      // The claim will time out and the job will run again: at-least-once still holds.
      LOG.log(Level.WARNING, "snoozing job " + job.jobId() + " failed", e);
    }
  }

  private static String truncate(String s) {
    return s.length() <= MAX_STATUS_CHARS ? s : s.substring(0, MAX_STATUS_CHARS - 1) + "…";
  }

  // ------------------------------------------------------------ shutdown

  /**
   * Stops taking jobs: cuts long polls short or closes the stream's sending side, and wakes pollers
   * waiting for a slot or backing off. Pullers are not interrupted: one that just got jobs must
   * still be able to release them.
   */
  void stopPolling() {
    Poller fellBackTo;
    synchronized (this) {
      stopping = true;
      fellBackTo = fallback;
    }
    slots.stop();
    puller.stop();
    if (fellBackTo != null) {
      fellBackTo.stop();
    }
  }

  /** Waits up to {@code timeout} for the pullers to leave. */
  void awaitPollers(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    puller.await(timeout);
    Poller fellBackTo;
    synchronized (this) {
      fellBackTo = fallback;
    }
    if (fellBackTo != null) {
      fellBackTo.await(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
    }
  }

  /** Releases the jobs still running (after the grace period) back to PENDING, uncharged. */
  void releaseInFlight() {
    List<InFlight> toRelease = new ArrayList<>();
    for (InFlight f : inFlight.values()) {
      claimKeeper.untrack(f);
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
      acks.checkResults("release", client.checkpoint(queue, checkpoints));
    } catch (RunlaterException e) {
      LOG.log(Level.WARNING, "releasing " + jobs.size() + " jobs of " + queue + " failed", e);
    }
  }

  /** Flushes the acks still pending, then stops the acker. */
  void stopAcker(Duration timeout) throws InterruptedException {
    acks.stop(timeout);
  }
}
