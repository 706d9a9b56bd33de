package dev.runlater.worker;

import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs handlers for one or more queues: jobs come over one DequeueStream per queue (credits granted
 * as slots free up, acks sent on the same stream), or with long-polling Dequeue calls in {@link
 * DequeueMode#POLL}; a bounded thread pool; batched acks; automatic claim renewal; and graceful
 * shutdown.
 *
 * <pre>{@code
 * Worker worker = Worker.builder(client).concurrency(8).build();
 * worker.register("emails", job -> {
 *   send(job.bodyUtf8());
 *   return JobResult.success();
 * });
 * worker.start();
 * // ...
 * worker.close(); // stop dequeuing, let running jobs finish, release the rest
 * }</pre>
 *
 * <p>The worker does not own the client: close the client after the worker.
 */
public final class Worker implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(Worker.class.getName());

  /**
   * A worker's effective settings: what its builder was given, with the defaults filled in.
   *
   * @param workerId names the worker in the server's logs
   * @param concurrency jobs run at once per queue, unless {@link #register(String, int,
   *     JobHandler)} says otherwise
   * @param batchSize most jobs one Dequeue asks for; 0 means the queue's concurrency
   * @param pollWait poll mode: how long one Dequeue long-polls
   * @param shutdownGrace how long {@link #close()} lets running jobs finish
   * @param ackDelay how long an ack waits to share a message with others
   * @param retryPolicy delays for thrown failures; null leaves them to the queue
   * @param dequeueMode stream or poll
   * @param clock the wall clock the server's claim expiries are read against
   */
  public record Settings(
      String workerId,
      int concurrency,
      int batchSize,
      Duration pollWait,
      Duration shutdownGrace,
      Duration ackDelay,
      RetryPolicy retryPolicy,
      DequeueMode dequeueMode,
      Clock clock) {}

  /** Default handlers run at once per queue (the same in the TypeScript and Python SDKs). */
  public static final int DEFAULT_CONCURRENCY = 100;

  /** Default time {@link #close()} lets running jobs finish. */
  public static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(25);

  /** Default longest time an ack waits to share a message with others. */
  public static final Duration DEFAULT_ACK_DELAY = Duration.ofMillis(5);

  /** Default long-poll wait of one Dequeue in poll mode. */
  public static final Duration DEFAULT_POLL_WAIT = Duration.ofSeconds(20);

  private final RunlaterClient client;
  private final Settings settings;
  private final ThreadFactory handlerThreads;
  private final Map<String, QueueRunner> runners = new LinkedHashMap<>();
  // Threads of a scheduled pool start with its first task, so creating it here costs nothing.
  private final ScheduledExecutorService renewals = renewalScheduler();
  private final ClaimKeeper claimKeeper;
  private ExecutorService handlers;
  private boolean started;
  private boolean closed;

  private Worker(RunlaterClient client, Settings settings, ThreadFactory handlerThreads) {
    this.client = client;
    this.settings = settings;
    this.handlerThreads = handlerThreads;
    this.claimKeeper = new ClaimKeeper(client, renewals);
  }

  /** Starts a builder for a worker that uses {@code client}. */
  public static Builder builder(RunlaterClient client) {
    return new Builder(client);
  }

  /** Configures a {@link Worker}. */
  public static final class Builder {
    private final RunlaterClient client;
    private String workerId = "java-" + UUID.randomUUID().toString().substring(0, 8);
    private int concurrency = DEFAULT_CONCURRENCY;
    private int batchSize;
    private Duration pollWait = DEFAULT_POLL_WAIT;
    private Duration shutdownGrace = DEFAULT_SHUTDOWN_GRACE;
    private Duration ackDelay = DEFAULT_ACK_DELAY;
    private RetryPolicy retryPolicy;
    private DequeueMode dequeueMode = DequeueMode.STREAM;
    private ThreadFactory handlerThreadFactory;
    private Clock clock = Clock.systemUTC();

    private Builder(RunlaterClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /** Names this worker in the server's logs; default {@code java-<random>}. */
    public Builder workerId(String workerId) {
      this.workerId = Objects.requireNonNull(workerId, "workerId");
      return this;
    }

    /**
     * Jobs run at once per registered queue, unless register says otherwise; default 100
     * (docs/workers.md).
     */
    public Builder concurrency(int concurrency) {
      if (concurrency < 1) {
        throw new IllegalArgumentException("concurrency must be at least 1");
      }
      this.concurrency = concurrency;
      return this;
    }

    /**
     * Most jobs one Dequeue asks for (1 to 1,000); default: the queue's concurrency. A batch of
     * half the concurrency or less keeps several Dequeue calls in flight (concurrency / batchSize
     * of them, at most 4), each asking only for free slots. A batch larger than a queue's
     * concurrency is cut to it: this worker does not prefetch. In stream mode the worker grants
     * credits once half a batch of slots is free.
     */
    public Builder batchSize(int batchSize) {
      if (batchSize < 1 || batchSize > 1000) {
        throw new IllegalArgumentException(
            "batchSize must be 1 to 1000 (the server's Dequeue limit)");
      }
      this.batchSize = batchSize;
      return this;
    }

    /**
     * Poll mode: how long one Dequeue long-polls when no job is due (at most 60 s); default 20 s.
     * {@link Worker#close()} cuts a long poll short.
     */
    public Builder pollWait(Duration pollWait) {
      this.pollWait = Objects.requireNonNull(pollWait, "pollWait");
      return this;
    }

    /** How long {@link Worker#close()} lets running jobs finish; default 25 s. */
    public Builder shutdownGrace(Duration grace) {
      this.shutdownGrace = Objects.requireNonNull(grace, "grace");
      return this;
    }

    /**
     * Longest time a finished job's ack waits to share a message (a stream message or an Ack call)
     * with others; default 5 ms.
     */
    public Builder ackDelay(Duration delay) {
      this.ackDelay = Objects.requireNonNull(delay, "delay");
      return this;
    }

    /**
     * The wall clock the worker reads the server's claim expiries against and computes snooze due
     * times with; default {@link Clock#systemUTC()}. Renewals are timed on the JVM's monotonic
     * clock whatever it says. Tests against a server on a manual clock pass that clock here.
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Delay for failures a handler throws (other than {@link RetryAfter} and {@link DoNotRetry});
     * default none, so the queue's own retry policy decides.
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = policy;
      return this;
    }

    /**
     * How jobs are taken: {@link DequeueMode#STREAM} (default; one DequeueStream per queue) or
     * {@link DequeueMode#POLL} (long-polling Dequeue calls).
     */
    public Builder dequeueMode(DequeueMode mode) {
      this.dequeueMode = Objects.requireNonNull(mode, "mode");
      return this;
    }

    /**
     * Makes the threads handlers run on; default: platform threads named {@code
     * runlater-handler-N}. On Java 21 or later, {@code Thread.ofVirtual().name("handler-",
     * 0).factory()} runs each handler on a virtual thread. The worker's pool has as many threads as
     * its queues' concurrency added up, and interrupts them after the shutdown grace period.
     */
    public Builder handlerThreadFactory(ThreadFactory factory) {
      this.handlerThreadFactory = Objects.requireNonNull(factory, "factory");
      return this;
    }

    /** The worker, not yet started. */
    public Worker build() {
      return new Worker(
          client,
          new Settings(
              workerId,
              concurrency,
              batchSize,
              pollWait,
              shutdownGrace,
              ackDelay,
              retryPolicy,
              dequeueMode,
              clock),
          handlerThreadFactory == null ? named("runlater-handler-", false) : handlerThreadFactory);
    }
  }

  /** Runs {@code handler} for jobs of {@code queue} with the worker's default concurrency. */
  public synchronized Worker register(String queue, JobHandler handler) {
    return register(queue, settings.concurrency(), handler);
  }

  /** Runs {@code handler} for jobs of {@code queue}, at most {@code concurrency} at once. */
  public synchronized Worker register(String queue, int concurrency, JobHandler handler) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(handler, "handler");
    if (started) {
      throw new IllegalStateException("register handlers before start()");
    }
    if (concurrency < 1) {
      throw new IllegalArgumentException("concurrency must be at least 1");
    }
    if (runners.containsKey(queue)) {
      throw new IllegalStateException("a handler for " + queue + " is already registered");
    }
    runners.put(queue, new QueueRunner(client, queue, handler, concurrency, settings, claimKeeper));
    return this;
  }

  /** The worker's settings, defaults filled in. */
  public Settings settings() {
    return settings;
  }

  /**
   * Starts taking jobs of every registered queue. It first checks that each queue exists, and
   * throws before taking any job if not: a {@link dev.runlater.NotFoundException} for a missing
   * queue, an {@link dev.runlater.UnavailableException} for a server that is not there, naming the
   * queue and the server. Once started, a server that goes away is retried with backoff (logged at
   * WARNING).
   *
   * @throws RunlaterException if a queue does not exist or the server cannot be reached
   */
  public synchronized void start() {
    if (started) {
      throw new IllegalStateException("already started");
    }
    if (closed) {
      // As the TypeScript and Python workers: close() before start() ends the worker for good.
      throw new IllegalStateException("this worker was closed; create a new one");
    }
    if (runners.isEmpty()) {
      throw new IllegalStateException("register at least one handler before start()");
    }
    for (String queue : runners.keySet()) {
      try {
        client.getQueue(queue);
      } catch (RunlaterException e) {
        throw e.withContext("worker cannot start on queue \"" + queue + "\" at " + client.target());
      }
    }
    started = true;
    int threads = runners.values().stream().mapToInt(QueueRunner::concurrency).sum();
    handlers = Executors.newFixedThreadPool(threads, handlerThreads);
    for (QueueRunner r : runners.values()) {
      r.start(handlers);
    }
  }

  /**
   * Shuts down gracefully: stops dequeuing, lets running jobs finish for the grace period, then
   * releases the rest back to PENDING (no attempt charged) and interrupts their threads, and
   * finally flushes pending acks. Idempotent.
   */
  @Override
  public synchronized void close() {
    if (closed || !started) {
      closed = true;
      renewals.shutdownNow();
      return;
    }
    closed = true;
    try {
      for (QueueRunner r : runners.values()) {
        r.stopPolling();
      }
      for (QueueRunner r : runners.values()) {
        r.awaitPollers(Duration.ofSeconds(10)); // a stream is cut off after 5 s
      }
      handlers.shutdown();
      if (!handlers.awaitTermination(settings.shutdownGrace().toNanos(), TimeUnit.NANOSECONDS)) {
        for (QueueRunner r : runners.values()) {
          r.releaseInFlight();
        }
        handlers.shutdownNow(); // interrupt handlers whose jobs were released
      }
      renewals.shutdownNow();
      for (QueueRunner r : runners.values()) {
        r.stopAcker(Duration.ofSeconds(10));
      }
    } catch (InterruptedException e) {
      LOG.log(
          Level.WARNING, "interrupted while closing; some jobs may wait for their claim timeout");
      handlers.shutdownNow();
      renewals.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  /**
   * One thread for every claim renewal. A renewal is scheduled per job and cancelled when the job
   * is done: removed from the queue at once, or the queue would hold every job the worker ever ran
   * until its claim's half-life (15.7 % of a busy worker's CPU went to sifting it).
   */
  private static ScheduledExecutorService renewalScheduler() {
    ScheduledThreadPoolExecutor s =
        new ScheduledThreadPoolExecutor(1, named("runlater-renew-", true));
    s.setRemoveOnCancelPolicy(true);
    return s;
  }

  private static ThreadFactory named(String prefix, boolean daemon) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + n.incrementAndGet());
      t.setDaemon(daemon);
      return t;
    };
  }
}
