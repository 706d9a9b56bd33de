package dev.runlater.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.Await;
import dev.runlater.Job;
import dev.runlater.JobFilter;
import dev.runlater.JobSpec;
import dev.runlater.JobState;
import dev.runlater.QueueConfig;
import dev.runlater.QueueRetryPolicy;
import dev.runlater.ServerTest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The worker framework end to end against a real server, in both dequeue modes. */
class WorkerTest extends ServerTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  private static String newQueue(QueueConfig config) {
    return newQueue("worker", config);
  }

  private static Worker.Builder worker(DequeueMode mode) {
    return Worker.builder(client)
        .dequeueMode(mode)
        .pollWait(Duration.ofSeconds(1))
        .shutdownGrace(Duration.ofSeconds(5));
  }

  private static Job job(String id) {
    return client.getJob(id, false).orElseThrow();
  }

  private static Job awaitState(String id, JobState state) {
    return Await.value(
        WAIT,
        "job " + id + " to be " + state,
        () -> {
          Job j = job(id);
          return j.state() == state ? j : null;
        });
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void runsManyJobsConcurrentlyAndAcksThem(DequeueMode mode) {
    String q = newQueue(QueueConfig.defaults());
    List<JobSpec> specs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      specs.add(JobSpec.of(q, "job-" + i));
    }
    List<String> ids = client.enqueue(specs);
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    Map<String, Integer> runs = new ConcurrentHashMap<>();

    try (Worker w = worker(mode).concurrency(4).build()) {
      w.register(
          q,
          job -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            runs.merge(job.jobId(), 1, Integer::sum);
            Thread.sleep(20);
            running.decrementAndGet();
            return JobResult.success("ok " + job.bodyUtf8());
          });
      w.start();
      Await.until(
          WAIT,
          "all jobs to succeed",
          () -> client.countJobs(JobFilter.queue(q).withState(JobState.SUCCEEDED)) == 40);
    }
    assertEquals(40, runs.size());
    assertTrue(runs.values().stream().allMatch(n -> n == 1), "each job ran once");
    assertTrue(maxRunning.get() <= 4, "concurrency bound held: " + maxRunning.get());
    assertTrue(maxRunning.get() > 1, "jobs ran in parallel");
    assertTrue(job(ids.get(7)).customStatus().contains("ok job-7"));
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void servesSeveralQueuesWithTheirOwnHandlers(DequeueMode mode) {
    String emails = newQueue(QueueConfig.defaults());
    String reports = newQueue(QueueConfig.defaults());
    String e = client.enqueue(JobSpec.of(emails, "e"));
    String r = client.enqueue(JobSpec.of(reports, "r"));
    try (Worker w = worker(mode).build()) {
      w.register(emails, job -> JobResult.success("email"));
      w.register(reports, 1, job -> JobResult.success("report"));
      w.start();
      assertTrue(awaitState(e, JobState.SUCCEEDED).customStatus().contains("email"));
      assertTrue(awaitState(r, JobState.SUCCEEDED).customStatus().contains("report"));
    }
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void exceptionFailsTheAttemptWithItsMessage(DequeueMode mode) {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(1));
    try (Worker w = worker(mode).build()) {
      w.register(
          q,
          job -> {
            throw new IllegalStateException("disk full");
          });
      w.start();
      Job j = awaitState(id, JobState.FAILED);
      assertTrue(j.customStatus().contains("disk full"), j.customStatus());
    }
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void failedAttemptIsRetriedByQueuePolicy(DequeueMode mode) {
    String q =
        newQueue(
            QueueConfig.builder()
                .retryPolicy(new QueueRetryPolicy(Duration.ofMillis(100), 5, Duration.ofSeconds(1)))
                .build());
    String id = client.enqueue(JobSpec.of(q, "flaky").withAttemptsAllowed(3));
    List<Integer> attempts = new ArrayList<>();
    try (Worker w = worker(mode).build()) {
      w.register(
          q,
          job -> {
            synchronized (attempts) {
              attempts.add(job.attempt());
            }
            if (job.attempt() == 1) {
              throw new RuntimeException("first time fails");
            }
            return JobResult.success();
          });
      w.start();
      awaitState(id, JobState.SUCCEEDED);
    }
    synchronized (attempts) {
      assertEquals(List.of(1, 2), attempts);
    }
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void retryAfterSetsTheDelay(DequeueMode mode) {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(3));
    Instant before = Instant.now();
    try (Worker w = worker(mode).build()) {
      w.register(
          q,
          job -> {
            throw new RetryAfter(Duration.ofSeconds(30), "rate limited");
          });
      w.start();
      Job j =
          Await.value(
              WAIT,
              "the failure to be acked",
              () -> {
                Job x = job(id);
                return x.state() == JobState.PENDING && x.attemptsRemaining() == 2 ? x : null;
              });
      assertTrue(j.runAfter().isAfter(before.plusSeconds(28)), "run_after " + j.runAfter());
      assertTrue(j.customStatus().contains("rate limited"));
    }
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void doNotRetryFailsForGood(DequeueMode mode) {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(5));
    try (Worker w = worker(mode).build()) {
      w.register(
          q,
          job -> {
            throw new DoNotRetry("invalid address");
          });
      w.start();
      Job j = awaitState(id, JobState.FAILED);
      assertEquals(4, j.attemptsRemaining());
      assertTrue(j.customStatus().contains("invalid address"));
    }
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void workerRetryPolicyOverridesTheQueues(DequeueMode mode) {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(3));
    Instant before = Instant.now();
    try (Worker w =
        worker(mode).retryPolicy(RetryPolicy.constant(Duration.ofSeconds(120))).build()) {
      w.register(
          q,
          job -> {
            throw new RuntimeException("nope");
          });
      w.start();
      Job j =
          Await.value(
              WAIT,
              "the failure to be acked",
              () -> {
                Job x = job(id);
                return x.state() == JobState.PENDING && x.attemptsRemaining() == 2 ? x : null;
              });
      // The queue's default would be 5 s.
      assertTrue(j.runAfter().isAfter(before.plusSeconds(110)), "run_after " + j.runAfter());
    }
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void snoozeReschedulesWithoutChargingAnAttempt(DequeueMode mode) {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "cron").withAttemptsAllowed(2));
    // The due time is the worker's clock plus the delay: a clock an hour ahead shows it.
    Instant workerNow = Instant.now().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.MILLIS);
    AtomicInteger calls = new AtomicInteger();
    try (Worker w = worker(mode).clock(Clock.fixed(workerNow, ZoneOffset.UTC)).build()) {
      w.register(
          q,
          job -> {
            calls.incrementAndGet();
            return JobResult.snooze(Duration.ofSeconds(60), "sleeping");
          });
      w.start();
      Await.until(WAIT, "the handler to run", () -> calls.get() == 1);
      Job j =
          Await.value(
              WAIT,
              "the snooze",
              () -> {
                Job x = job(id);
                return x.state() == JobState.PENDING ? x : null;
              });
      assertEquals(2, j.attemptsRemaining());
      assertEquals(workerNow.plusSeconds(60), j.runAfter());
      assertEquals("sleeping", j.customStatus());
    }
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void claimIsRenewedWhileAJobRunsLong(DequeueMode mode) {
    String q =
        newQueue(
            QueueConfig.builder()
                .claimTimeout(Duration.ofMillis(300))
                .retryPolicy(new QueueRetryPolicy(Duration.ofMillis(100), 5, Duration.ofSeconds(1)))
                .build());
    String id = client.enqueue(JobSpec.of(q, "long").withAttemptsAllowed(3));
    AtomicInteger calls = new AtomicInteger();
    try (Worker w = worker(mode).build()) {
      w.register(
          q,
          job -> {
            calls.incrementAndGet();
            Thread.sleep(1500); // five claim timeouts
            return JobResult.success();
          });
      w.start();
      Job j = awaitState(id, JobState.SUCCEEDED);
      assertEquals(2, j.attemptsRemaining(), "only one attempt was charged");
    }
    assertEquals(1, calls.get(), "the claim never lapsed, so the job ran once");
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void closeLetsARunningJobFinishWithinTheGracePeriod(DequeueMode mode) throws Exception {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x"));
    CountDownLatch started = new CountDownLatch(1);
    Worker w = worker(mode).shutdownGrace(Duration.ofSeconds(10)).build();
    w.register(
        q,
        job -> {
          started.countDown();
          Thread.sleep(500);
          return JobResult.success("finished");
        });
    w.start();
    assertTrue(started.await(10, TimeUnit.SECONDS));
    w.close();
    // close() returns only after the ack was sent.
    Job j = job(id);
    assertEquals(JobState.SUCCEEDED, j.state());
    assertTrue(j.customStatus().contains("finished"));
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void closeReleasesAJobStillRunningAfterTheGracePeriod(DequeueMode mode) throws Exception {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "stuck").withAttemptsAllowed(3));
    CountDownLatch started = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    Worker w = worker(mode).shutdownGrace(Duration.ofMillis(200)).build();
    w.register(
        q,
        job -> {
          started.countDown();
          try {
            Thread.sleep(60_000);
          } catch (InterruptedException e) {
            interrupted.set(true);
            throw e;
          }
          return JobResult.success();
        });
    w.start();
    assertTrue(started.await(10, TimeUnit.SECONDS));
    long t0 = System.nanoTime();
    w.close();
    assertTrue(
        System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "close() did not wait for the job");

    Job j = job(id);
    assertEquals(JobState.PENDING, j.state(), "released back to PENDING");
    assertEquals(3, j.attemptsRemaining(), "no attempt charged");
    Await.until(WAIT, "the handler to be interrupted", interrupted::get);
    // Nothing was acked after the release: the job is still pending and can be taken again.
    assertEquals(1, client.dequeue(q, 1, null).size());
  }

  @ParameterizedTest
  @EnumSource(DequeueMode.class)
  void closeStopsDequeuingPromptly(DequeueMode mode) {
    String q = newQueue(QueueConfig.defaults());
    Worker w = Worker.builder(client).dequeueMode(mode).pollWait(Duration.ofSeconds(30)).build();
    w.register(q, job -> JobResult.success());
    w.start();
    long t0 = System.nanoTime();
    w.close();
    assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5), "the long poll was cancelled");
    // A job enqueued after close() stays pending.
    String id = client.enqueue(JobSpec.of(q, "after"));
    assertEquals(JobState.PENDING, job(id).state());
  }

  @Test
  void registerAfterStartIsRefused() {
    String q = newQueue(QueueConfig.defaults());
    try (Worker w = worker(DequeueMode.STREAM).build()) {
      w.register(q, job -> null);
      w.start();
      IllegalStateException e =
          org.junit.jupiter.api.Assertions.assertThrows(
              IllegalStateException.class, () -> w.register("other", job -> null));
      assertFalse(e.getMessage().isEmpty());
    }
  }
}
