package dev.runlater.worker;

import dev.runlater.Ack;
import dev.runlater.DequeueStream;
import dev.runlater.DequeuedJob;
import dev.runlater.JobOutcome;
import dev.runlater.RunlaterException;
import io.grpc.Status;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Takes jobs over one {@code WorkerService.DequeueStream} instead of a Dequeue call per batch (the
 * TypeScript worker's {@code stream-puller.ts}, on threads). The worker grants credits as its slots
 * free up and sends its acks on the same stream; the server pushes jobs as they become due, never
 * more than the credits not yet used.
 *
 * <ul>
 *   <li>Credits: the free slots, taken from {@link Slots} when granted, so credits not yet used
 *       plus jobs held never exceed the concurrency. They are granted once half a batch of slots is
 *       free (fewer, fuller messages), or with acks that are due.
 *   <li>Acks: sent with the next message, or alone when the {@link AckBatcher}'s linger runs out.
 *       The server answers them in order, so the unanswered ones are a FIFO. When a stream ends or
 *       breaks, those go back to the AckBatcher (a repeat is harmless: it comes back STALE_CLAIM)
 *       and travel on the next stream or in an Ack call.
 *   <li>A stream that broke, or ended having brought nothing, is reopened after a backoff. A server
 *       without the stream (UNIMPLEMENTED) makes the queue fall back to polling.
 *   <li>Stop: the worker closes its side; the server answers the acks it has, and ends the stream.
 *       Jobs that arrive meanwhile are dispatched (and released). A server that does not end the
 *       stream within {@link #STOP_TIMEOUT} is cut off.
 * </ul>
 */
final class StreamPuller implements Puller {
  private static final System.Logger LOG = System.getLogger(StreamPuller.class.getName());

  /** Most credits not yet used that the server accepts. */
  private static final int CREDIT_MAX = 10_000;

  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

  private final Setup s;

  /** Grant credits once at least this many slots are free. */
  private final int refillAt;

  /** Called (on the stream thread) when the server does not offer DequeueStream. */
  private final Runnable fallBackToPolling;

  private final Thread thread;
  private final CompletableFuture<Void> stopped = new CompletableFuture<>();

  // Guarded by this.
  /** The open stream, while it takes messages; null between streams. */
  private DequeueStream stream;

  /** Credits granted on the open stream and not yet used: jobs that may be on their way. */
  private int onTheWay;

  /** Acks sent on the open stream and not yet answered, oldest first. */
  private final ArrayDeque<List<Ack>> unanswered = new ArrayDeque<>();

  /** The open stream brought a message. */
  private boolean brought;

  private boolean stopping;

  StreamPuller(Setup setup, Runnable fallBackToPolling) {
    this.s = setup;
    this.refillAt = Math.max(1, (setup.batchSize() + 1) / 2);
    this.fallBackToPolling = fallBackToPolling;
    this.thread = new Thread(this::run, "runlater-stream-" + setup.queue());
  }

  @Override
  public void start() {
    thread.start();
  }

  /** Keeps a stream open, opening another after an end or a break, until stopped. */
  private void run() {
    Backoff backoff = new Backoff();
    while (true) {
      CompletableFuture<RunlaterException> ended = new CompletableFuture<>();
      DequeueStream opened = open(ended);
      if (opened == null) {
        return; // stopping
      }
      RunlaterException error = awaitEnd(opened, ended);
      boolean broughtAny;
      synchronized (this) {
        broughtAny = brought;
      }
      if (stopped.isDone()) {
        return;
      }
      if (error != null && error.code() == Status.Code.UNIMPLEMENTED && !broughtAny) {
        LOG.log(
            Level.WARNING,
            "the server does not offer DequeueStream; polling " + s.queue() + " instead",
            error);
        fallBackToPolling.run();
        return;
      }
      if (broughtAny) {
        backoff.reset();
      }
      if (error != null || !broughtAny) {
        Duration wait = backoff.next();
        if (error != null) {
          LOG.log(
              Level.WARNING,
              "dequeue stream of " + s.queue() + " broke; reopening in " + wait,
              error);
        }
        if (sleepUnlessStopped(wait)) {
          return;
        }
      }
    }
  }

  private synchronized DequeueStream open(CompletableFuture<RunlaterException> ended) {
    if (stopping) {
      return null;
    }
    brought = false;
    onTheWay = credit(s.slots().takeAll(1));
    stream = s.client().dequeueStream(s.queue(), s.workerId(), onTheWay, new Listener(ended));
    return stream;
  }

  /** Waits for the stream to end; once stopping, for {@link #STOP_TIMEOUT} at most. */
  private RunlaterException awaitEnd(
      DequeueStream opened, CompletableFuture<RunlaterException> ended) {
    CompletableFuture.anyOf(ended, stopped).join();
    if (!ended.isDone()) {
      try {
        return ended.get(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException | InterruptedException | ExecutionException e) {
        LOG.log(Level.WARNING, "the server did not end the stream of " + s.queue() + " in time");
        opened.cancel();
      }
    }
    return ended.join();
  }

  /** Sleeps; true if stopped meanwhile. */
  private boolean sleepUnlessStopped(Duration d) {
    try {
      stopped.get(d.toMillis(), TimeUnit.MILLISECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException | ExecutionException e) {
      return true;
    }
  }

  /** A slot came back: send credits (and acks) if half a batch is free or acks piled up. */
  @Override
  public void poke() {
    send(false);
  }

  /** The AckBatcher's linger ran out: send its acks now; false if no stream can carry them. */
  boolean carryAcks() {
    return send(true);
  }

  private synchronized boolean send(boolean ackDue) {
    if (stream == null || stopping) {
      return false;
    }
    boolean acksDue = ackDue || s.acks().size() >= refillAt;
    int credit = credit(s.slots().takeAll(acksDue ? 1 : refillAt));
    if (!acksDue && credit == 0) {
      return true;
    }
    List<Ack> acks = s.acks().take();
    if (acks.isEmpty() && credit == 0) {
      return true;
    }
    onTheWay += credit;
    if (!acks.isEmpty()) {
      unanswered.add(acks);
    }
    // If the stream just ended, this sends nothing; onEnd gives the credit and the acks back.
    stream.send(credit, acks);
    return true;
  }

  /** Keeps credits not yet used within the server's bound; slots over it go back. */
  private int credit(int taken) {
    int credit = Math.min(taken, CREDIT_MAX - onTheWay);
    s.slots().giveBack(taken - credit);
    return credit;
  }

  /** Closes the worker's side of the open stream: the server answers the acks it has, and ends. */
  @Override
  public void stop() {
    synchronized (this) {
      stopping = true;
      if (stream != null) {
        stream.closeSend();
      }
    }
    stopped.complete(null);
  }

  @Override
  public void await(Duration timeout) throws InterruptedException {
    thread.join(Math.max(1, timeout.toMillis()));
  }

  /** One stream's messages, on a gRPC thread, one at a time. */
  private final class Listener implements DequeueStream.Listener {
    private final CompletableFuture<RunlaterException> ended;

    Listener(CompletableFuture<RunlaterException> ended) {
      this.ended = ended;
    }

    @Override
    public void onJobs(List<DequeuedJob> jobs) {
      synchronized (StreamPuller.this) {
        brought = true;
        onTheWay -= jobs.size(); // their slots stay held by the jobs
      }
      for (DequeuedJob job : jobs) {
        s.dispatch().accept(job);
      }
    }

    @Override
    public void onAckResults(List<JobOutcome> outcomes) {
      synchronized (StreamPuller.this) {
        brought = true;
        unanswered.poll();
      }
      s.acks().checkResults("ack", outcomes);
    }

    @Override
    public void onEnd(RunlaterException error) {
      synchronized (StreamPuller.this) {
        stream = null;
        s.slots().giveBack(Math.max(0, onTheWay));
        onTheWay = 0;
        // Unanswered acks may or may not have been applied: send them again.
        List<Ack> again = new ArrayList<>();
        unanswered.forEach(again::addAll);
        unanswered.clear();
        s.acks().restore(again);
      }
      ended.complete(error);
    }
  }
}
