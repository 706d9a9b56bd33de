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
import dev.runlater.RunlaterClient;
import dev.runlater.ServerTest;
import dev.runlater.TestServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Poll mode: several Dequeue calls in flight when a queue's concurrency holds several batches,
 * watched from the client side by {@link DequeueTally}.
 */
class WorkerPullersTest extends ServerTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  /** What the handler saw while a worker ran a queue's jobs to the end. */
  private record Run(DequeueTally tally, Map<String, Integer> runs, int maxRunning) {}

  /** Enqueues {@code jobs} jobs and runs them all with a watched worker (5 ms each). */
  private static Run runAll(int concurrency, int batchSize, int jobs) {
    String q = newQueue("pullers", QueueConfig.defaults());
    DequeueTally tally = new DequeueTally();
    Map<String, Integer> runs = new ConcurrentHashMap<>();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    try (RunlaterClient spy = TestServer.client(tally);
        Worker w =
            Worker.builder(spy)
                .dequeueMode(DequeueMode.POLL)
                .concurrency(concurrency)
                .batchSize(batchSize)
                .pollWait(Duration.ofMillis(200))
                .build()) {
      w.register(
          q,
          job -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            runs.merge(job.jobId(), 1, Integer::sum);
            Thread.sleep(5);
            running.decrementAndGet();
            tally.finished();
            return JobResult.success();
          });
      w.start();
      List<JobSpec> specs = new ArrayList<>();
      for (int i = 0; i < jobs; i++) {
        specs.add(JobSpec.of(q, "job-" + i));
      }
      client.enqueue(specs);
      Await.until(
          WAIT,
          "all jobs to succeed",
          () -> client.countJobs(JobFilter.queue(q).withState(JobState.SUCCEEDED)) == jobs);
    }
    return new Run(tally, runs, maxRunning.get());
  }

  /** Each job ran once and its success was sent once. */
  private static void assertEachRanAndAckedOnce(Run run, int jobs) {
    assertEquals(jobs, run.runs().size());
    assertTrue(
        run.runs().values().stream().allMatch(n -> n == 1), "each job ran once: " + run.runs());
    assertEquals(run.runs().keySet(), run.tally().acks().keySet(), "every job was acked");
    assertTrue(
        run.tally().acks().values().stream().allMatch(n -> n == 1),
        "each ack was sent once: " + run.tally().acks());
  }

  @Test
  void keepsSeveralDequeuesInFlightWhenConcurrencyHoldsSeveralBatches() {
    Run run = runAll(8, 2, 60); // room for four batches: up to four calls in flight
    assertTrue(
        run.tally().maxInFlight() >= 2, "calls in flight at once: " + run.tally().maxInFlight());
    assertTrue(
        run.tally().maxInFlight() <= 4, "calls in flight at once: " + run.tally().maxInFlight());
    assertEachRanAndAckedOnce(run, 60);
  }

  @Test
  void keepsOneDequeueInFlightWhenTwoBatchesDoNotFit() {
    Run run = runAll(5, 3, 30); // 5 < 2 x 3
    assertEquals(1, run.tally().maxInFlight());
    assertEachRanAndAckedOnce(run, 30);
  }

  @Test
  void neverAsksForMoreJobsThanFreeSlots() {
    // Two pollers of 3 leave a remainder of 1: calls must be cut to the free slots.
    Run run = runAll(7, 3, 60);
    assertEquals(2, run.tally().maxInFlight());
    assertTrue(run.tally().maxLimit() <= 3, "largest limit: " + run.tally().maxLimit());
    assertTrue(
        run.tally().maxSpokenFor() <= 7,
        "jobs asked for + held at once: " + run.tally().maxSpokenFor());
    assertTrue(run.maxRunning() <= 7, "handlers at once: " + run.maxRunning());
    assertEachRanAndAckedOnce(run, 60);
  }

  @Test
  void stopsGracefullyWithSeveralDequeuesInFlight() throws Exception {
    String q = newQueue("pullers_stop", QueueConfig.defaults());
    DequeueTally tally = new DequeueTally();
    CountDownLatch gate = new CountDownLatch(1);
    AtomicInteger started = new AtomicInteger();
    Map<String, Integer> runs = new ConcurrentHashMap<>();
    try (RunlaterClient spy = TestServer.client(tally)) {
      Worker w =
          Worker.builder(spy)
              .dequeueMode(DequeueMode.POLL)
              .concurrency(8)
              .batchSize(2) // four pollers
              .pollWait(Duration.ofSeconds(20)) // a long poll left running must be cut short
              .shutdownGrace(Duration.ofSeconds(5))
              .build();
      w.register(
          q,
          job -> {
            runs.merge(job.jobId(), 1, Integer::sum);
            started.incrementAndGet();
            if (!job.bodyUtf8().equals("quick")) {
              gate.await();
            }
            tally.finished();
            return JobResult.success();
          });
      w.start();
      // The quick job's ack rides on a Dequeue (one that does not long-poll, so close() lets
      // it finish) or goes in an Ack call; the slow ones' go in Ack calls while closing.
      List<String> ids =
          client.enqueue(
              List.of(
                  JobSpec.of(q, "slow-1").withAttemptsAllowed(4),
                  JobSpec.of(q, "slow-2").withAttemptsAllowed(4),
                  JobSpec.of(q, "quick").withAttemptsAllowed(4)));
      Await.until(WAIT, "all three jobs to start", () -> started.get() == 3);
      Await.until(
          WAIT,
          "the quick job to succeed",
          () -> client.getJob(ids.get(2), false).orElseThrow().state() == JobState.SUCCEEDED);
      Await.until(
          Duration.ofSeconds(5), "two Dequeue calls in flight", () -> tally.inFlight() >= 2);

      CompletableFuture<Void> closing = CompletableFuture.runAsync(w::close);
      Await.until(
          Duration.ofSeconds(2),
          "close() to cut the long polls short",
          () -> tally.inFlight() == 0);
      assertFalse(closing.isDone(), "close() waits for the running handlers");
      gate.countDown();
      closing.get(10, TimeUnit.SECONDS);

      for (String id : ids) {
        Job j = client.getJob(id, false).orElseThrow();
        assertEquals(JobState.SUCCEEDED, j.state(), j.jobId() + " " + j.customStatus());
        assertEquals(3, j.attemptsRemaining(), "one attempt each");
      }
      assertEquals(0, client.countJobs(JobFilter.queue(q).withState(JobState.RUNNING)));
      assertEquals(3, runs.size());
      assertTrue(runs.values().stream().allMatch(n -> n == 1), "each job ran once: " + runs);
      assertEquals(Map.copyOf(runs).keySet(), tally.acks().keySet(), "every job was acked");
      assertTrue(
          tally.acks().values().stream().allMatch(n -> n == 1),
          "each ack sent once: " + tally.acks());
    }
  }
}
