package dev.runlater.worker;

import dev.runlater.Ack;
import dev.runlater.AckOutcome;
import dev.runlater.JobOutcome;
import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;

/**
 * Collects a queue's job outcomes and gets them to the server in batches. The cheap path is the
 * next Dequeue ({@link #take()} hands the batch over to piggy-back on it) or the DequeueStream (the
 * {@code carrier}); when neither comes along within the linger, the acker thread sends them in an
 * Ack call. A batch whose call failed, or whose stream broke before the answer came, is put back
 * ({@link #restore}): a repeat of an ack that was applied is harmless (it comes back STALE_CLAIM),
 * losing it would cost a retry.
 */
final class AckBatcher {
  private static final System.Logger LOG = System.getLogger(AckBatcher.class.getName());

  /** Most acks in one request (the server's batch limit). */
  static final int MAX_BATCH = 1000;

  private final RunlaterClient client;
  private final String queue;
  private final Duration linger;
  private final ArrayDeque<Ack> pending = new ArrayDeque<>(); // guarded by this
  private boolean stopping; // guarded by this
  private final Thread thread;

  /**
   * When the linger runs out, first offered the pending acks: it sends them some other way (the
   * DequeueStream) and returns true, or returns false and an Ack call sends them.
   */
  private volatile BooleanSupplier carrier = () -> false;

  /**
   * Jobs whose ack is sent again because the call or stream carrying it failed. The first try may
   * have been applied, so a STALE_CLAIM answer for these is expected and not worth a warning.
   */
  private final Set<String> resent = ConcurrentHashMap.newKeySet();

  AckBatcher(RunlaterClient client, String queue, Duration linger) {
    this.client = client;
    this.queue = queue;
    this.linger = linger;
    this.thread = new Thread(this::loop, "runlater-ack-" + queue);
  }

  void carrier(BooleanSupplier carrier) {
    this.carrier = carrier;
  }

  void start() {
    thread.start();
  }

  synchronized void add(Ack ack) {
    pending.add(ack);
    notifyAll();
  }

  synchronized int size() {
    return pending.size();
  }

  /** Hands over the pending acks (up to a batch), oldest first; empty if none. */
  synchronized List<Ack> take() {
    List<Ack> batch = new ArrayList<>(Math.min(pending.size(), MAX_BATCH));
    while (!pending.isEmpty() && batch.size() < MAX_BATCH) {
      batch.add(pending.poll());
    }
    return batch;
  }

  /** Puts back acks whose delivery is unknown, ahead of the others, to be sent again. */
  synchronized void restore(List<Ack> acks) {
    for (int i = acks.size() - 1; i >= 0; i--) {
      resent.add(acks.get(i).jobId());
      pending.addFirst(acks.get(i));
    }
    notifyAll();
  }

  /** Warns about the jobs the server refused: their outcome was not applied. */
  void checkResults(String what, List<JobOutcome> outcomes) {
    for (JobOutcome o : outcomes) {
      boolean wasResent = resent.remove(o.jobId());
      if (wasResent && o.outcome() == AckOutcome.STALE_CLAIM) {
        LOG.log(Level.DEBUG, "resent {0} of job {1} was already applied", what, o.jobId());
      } else if (o.outcome() != AckOutcome.ACKNOWLEDGED) {
        LOG.log(Level.WARNING, "{0} of job {1} refused: {2}", what, o.jobId(), o.outcome());
      }
    }
  }

  private void loop() {
    Backoff backoff = new Backoff();
    try {
      while (true) {
        boolean flushing;
        synchronized (this) {
          while (pending.isEmpty() && !stopping) {
            wait();
          }
          if (pending.isEmpty()) {
            return; // stopping, and everything was sent
          }
          flushing = stopping;
        }
        if (!flushing) {
          Thread.sleep(linger.toMillis()); // let a few more acks join the batch
          if (carrier.getAsBoolean()) {
            continue;
          }
        }
        List<Ack> batch = take();
        if (batch.isEmpty()) {
          continue; // a Dequeue or the stream took them meanwhile
        }
        try {
          checkResults("ack", client.ack(queue, batch));
          backoff.reset();
        } catch (RunlaterException e) {
          if (flushing) {
            // Giving up: these claims will time out and the jobs run again (at-least-once).
            LOG.log(
                Level.WARNING,
                "dropping " + batch.size() + " acks of " + queue + " at shutdown",
                e);
            continue;
          }
          Duration wait = backoff.next();
          LOG.log(Level.WARNING, "ack to " + queue + " failed; retrying in " + wait, e);
          restore(batch);
          Thread.sleep(wait.toMillis());
        }
      }
    } catch (InterruptedException e) {
      // Only the JVM going down interrupts this thread; what is pending is lost to it anyway.
    }
  }

  /** Sends the acks still pending (Ack calls, one try each), then stops the acker thread. */
  void stop(Duration timeout) throws InterruptedException {
    synchronized (this) {
      stopping = true;
      notifyAll();
    }
    thread.join(Math.max(1, timeout.toMillis()));
  }
}
