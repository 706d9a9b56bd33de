package dev.runlater.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import dev.runlater.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Stream mode as the server sees it, watched from the client side by {@link StreamTally}. */
class WorkerStreamTest extends ServerTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  /** What the handler saw while a worker ran a queue's jobs to the end. */
  private record Run(StreamTally tally, Map<String, Integer> runs, int maxRunning) {}

  /** Enqueues {@code jobs} jobs and runs them all with a watched stream-mode worker. */
  private static Run runAll(StreamTally tally, int concurrency, int batchSize, int jobs) {
    String q = newQueue("stream", QueueConfig.defaults());
    Map<String, Integer> runs = new ConcurrentHashMap<>();
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    try (RunlaterClient spy = TestServer.client(tally);
        Worker w =
            Worker.builder(spy)
                .dequeueMode(DequeueMode.STREAM)
                .concurrency(concurrency)
                .batchSize(batchSize)
                .build()) {
      w.register(
          q,
          job -> {
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            runs.merge(job.jobId(), 1, Integer::sum);
            Thread.sleep(2);
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

  private static void assertEachRanOnce(Run run, int jobs) {
    assertEquals(jobs, run.runs().size());
    assertTrue(run.runs().values().stream().allMatch(n -> n == 1), "each ran once: " + run.runs());
  }

  @Test
  void takesJobsAndSendsAcksOnOneStreamWithoutDequeueOrAckCalls() {
    Run run = runAll(new StreamTally(), 4, 4, 60);
    assertEachRanOnce(run, 60);
    Map<String, Integer> calls = run.tally().calls();
    assertEquals(1, calls.get("DequeueStream"), "calls: " + calls);
    assertNull(calls.get("Dequeue"), "calls: " + calls);
    assertNull(calls.get("Ack"), "calls: " + calls);
    assertEquals(run.runs().keySet(), run.tally().acks().keySet(), "every job was acked");
    assertTrue(
        run.tally().acks().values().stream().allMatch(n -> n == 1),
        "each ack was sent once: " + run.tally().acks());
  }

  @Test
  void creditsNotYetUsedPlusRunningJobsNeverExceedTheConcurrency() {
    Run run = runAll(new StreamTally(), 5, 2, 100);
    assertEachRanOnce(run, 100);
    assertTrue(run.tally().maxSpokenFor() <= 5, "spoken for: " + run.tally().maxSpokenFor());
    assertTrue(run.maxRunning() <= 5, "handlers at once: " + run.maxRunning());
    // Credits were granted again as slots freed, not only when the stream opened.
    assertTrue(run.tally().grants() > 10, "credit grants: " + run.tally().grants());
  }

  @Test
  void anAckSwallowedByABrokenStreamIsSentAgain() {
    StreamTally tally = new StreamTally().breakOnFirstAck();
    Run run = runAll(tally, 1, 1, 3); // one job at a time: the swallowed message has one ack
    assertEachRanOnce(run, 3);
    assertTrue(tally.calls().get("DequeueStream") >= 2, "reopened: " + tally.calls());
    // The swallowed ack was sent again: one job's ack went out twice, and every job succeeded
    // (runAll waited for that) with its first attempt.
    assertEquals(
        1,
        tally.acks().values().stream().filter(n -> n == 2).count(),
        "acks sent: " + tally.acks());
    for (String id : run.runs().keySet()) {
      Job j = client.getJob(id, false).orElseThrow();
      assertEquals(10, j.attemptsRemaining(), "one attempt of 11 was charged");
    }
  }

  @Test
  void fallsBackToPollingWhenTheServerHasNoStream() {
    // Renames the stream method, so the server answers UNIMPLEMENTED as an older one would.
    ClientInterceptor noStream =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            if (method.equals(WorkerServiceGrpc.getDequeueStreamMethod())) {
              method =
                  method.toBuilder().setFullMethodName("runlater.v1.WorkerService/Gone").build();
            }
            return next.newCall(method, options);
          }
        };
    StreamTally tally = new StreamTally();
    String q = newQueue("nostream", QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x"));
    try (RunlaterClient c =
            RunlaterClient.builder(TestServer.target())
                .intercept(tally)
                .intercept(noStream)
                .build();
        Worker w = Worker.builder(c).pollWait(Duration.ofSeconds(1)).build()) {
      w.register(q, job -> JobResult.success("polled"));
      w.start();
      Await.until(
          WAIT,
          "the job to succeed",
          () -> client.getJob(id, false).orElseThrow().state() == JobState.SUCCEEDED);
    }
    assertEquals(1, tally.calls().get("DequeueStream"), "tried once: " + tally.calls());
    assertTrue(tally.calls().get("Dequeue") >= 1, "then polled: " + tally.calls());
  }
}
