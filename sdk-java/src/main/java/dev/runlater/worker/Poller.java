package dev.runlater.worker;

import dev.runlater.Ack;
import dev.runlater.DequeueOptions;
import dev.runlater.DequeueResult;
import dev.runlater.DequeuedJob;
import io.grpc.Context;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Takes jobs with long-polling Dequeue calls: poller threads each ask for as many jobs as there are
 * free slots, up to a batch, and piggy-back the pending acks. When the concurrency holds two
 * batches or more, {@code concurrency / batchSize} pollers (at most 4, as in the TypeScript worker)
 * keep several calls in flight; the slots keep them from asking for more than there is room for.
 */
final class Poller implements Puller {
  private static final System.Logger LOG = System.getLogger(Poller.class.getName());

  private final Setup s;
  private final Duration pollWait;
  private final List<Thread> threads = new ArrayList<>();
  private volatile boolean stopping;

  /** Every long poll runs in it: cancelling it at stop cuts them all short at once. */
  private final Context.CancellableContext polls = Context.ROOT.withCancellation();

  /** Counted down at stop: ends a backoff early (pollers are never interrupted). */
  private final CountDownLatch stopSignal = new CountDownLatch(1);

  Poller(Setup setup, Duration pollWait) {
    this.s = setup;
    this.pollWait = pollWait;
    // While one Dequeue travels, the slots its answer will not fill sit idle. With room for
    // several batches, keep that many calls in flight.
    int count = Math.max(1, Math.min(4, setup.slots().total() / setup.batchSize()));
    for (int i = 1; i <= count; i++) {
      threads.add(new Thread(this::loop, "runlater-poll-" + setup.queue() + "-" + i));
    }
  }

  @Override
  public void start() {
    threads.forEach(Thread::start);
  }

  @Override
  public void poke() {
    // Pollers wait on the slots themselves.
  }

  private void loop() {
    Backoff backoff = new Backoff();
    while (true) {
      int n;
      try {
        n = s.slots().await(s.batchSize());
      } catch (InterruptedException e) {
        return; // the worker never interrupts pollers; whoever did wants this one gone
      }
      if (n == 0) {
        return; // stopping
      }
      // Whichever poller calls next carries the acks pending now.
      List<Ack> acks = s.acks().take();
      DequeueOptions.Builder request =
          DequeueOptions.builder().limit(n).workerId(s.workerId()).acks(acks);
      DequeueResult result;
      try {
        // A Dequeue that carries acks does not long-poll, and stop() does not cancel it: its
        // answer confirms them now. A long poll cut short would leave it unknown whether they
        // were applied, and they would have to be sent again (to come back STALE_CLAIM).
        result =
            acks.isEmpty()
                ? polls.call(() -> s.client().dequeue(s.queue(), request.maxWait(pollWait).build()))
                : s.client().dequeue(s.queue(), request.build());
      } catch (Exception e) {
        s.slots().giveBack(n);
        s.acks().restore(acks); // whether a failed call applied them is unknown
        if (stopping) {
          return;
        }
        Duration wait = backoff.next();
        LOG.log(Level.WARNING, "dequeue from " + s.queue() + " failed; retrying in " + wait, e);
        try {
          if (stopSignal.await(wait.toMillis(), TimeUnit.MILLISECONDS)) {
            return;
          }
        } catch (InterruptedException ie) {
          return;
        }
        continue;
      }
      backoff.reset();
      s.acks().checkResults("ack", result.ackOutcomes());
      // The slots the answer filled stay taken until each job's handler is done.
      s.slots().giveBack(n - result.jobs().size());
      for (DequeuedJob job : result.jobs()) {
        s.dispatch().accept(job);
      }
    }
  }

  /** Cancels every long poll in flight (a call started later fails at once) and any backoff. */
  @Override
  public void stop() {
    stopping = true;
    stopSignal.countDown();
    polls.cancel(null);
  }

  @Override
  public void await(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (Thread t : threads) {
      t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }
  }
}
