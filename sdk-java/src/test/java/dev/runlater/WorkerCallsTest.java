package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The worker side of the protocol, call by call: Dequeue, Ack, Checkpoint. */
class WorkerCallsTest extends ServerTest {
  private static String newQueue(QueueConfig config) {
    return newQueue("calls", config);
  }

  private static Job job(String id) {
    return client.getJob(id, true).orElseThrow();
  }

  @Test
  void dequeueClaimsAndAckSucceeds() {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "hello").withAttemptsAllowed(2));

    List<DequeuedJob> got = client.dequeue(q, 10, null);
    assertEquals(1, got.size());
    DequeuedJob d = got.get(0);
    assertEquals(id, d.jobId());
    assertEquals(q, d.queue());
    assertEquals("hello", d.bodyUtf8());
    assertEquals(1, d.attempt());
    assertEquals(2, d.attemptsAllowed());
    assertFalse(d.claimToken().isEmpty());
    assertTrue(d.claimExpiresAt().isAfter(Instant.now()));

    Job running = job(id);
    assertEquals(JobState.RUNNING, running.state());
    assertEquals(1, running.attemptsRemaining());
    assertNotNull(running.claimExpiresAt());

    List<JobOutcome> out = client.ack(q, List.of(Ack.success(d, "done")));
    assertEquals(List.of(new JobOutcome(id, AckOutcome.ACKNOWLEDGED)), out);
    Job done = job(id);
    assertEquals(JobState.SUCCEEDED, done.state());
    assertTrue(done.customStatus().contains("done"));
    assertNotNull(done.finishedAt());
  }

  @Test
  void failureWithDelayGoesBackToPendingLater() {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(3));
    DequeuedJob d = client.dequeue(q, 1, null).get(0);
    Instant before = Instant.now();
    client.ack(q, List.of(Ack.failure(d, "try later", Duration.ofSeconds(30), false)));

    Job j = job(id);
    assertEquals(JobState.PENDING, j.state());
    assertEquals(2, j.attemptsRemaining());
    assertTrue(j.customStatus().contains("try later"));
    // Allow for clock differences of a second between test and server.
    assertTrue(j.runAfter().isAfter(before.plusSeconds(28)), "run_after " + j.runAfter());
    assertTrue(client.dequeue(q, 1, null).isEmpty(), "not due yet");
  }

  @Test
  void failureWithoutDelayFollowsQueuePolicy() {
    String q =
        newQueue(
            QueueConfig.builder()
                .retryPolicy(new QueueRetryPolicy(Duration.ofMillis(200), 5, Duration.ofHours(1)))
                .build());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(3));
    DequeuedJob first = client.dequeue(q, 1, null).get(0);
    client.ack(q, List.of(Ack.failure(first, "oops", null, false)));
    assertEquals(JobState.PENDING, job(id).state());
    // 200 ms later the job is due again, as attempt 2.
    DequeuedJob second =
        Await.value(
            Duration.ofSeconds(5),
            "the retry",
            () -> {
              List<DequeuedJob> l = client.dequeue(q, 1, Duration.ofMillis(500));
              return l.isEmpty() ? null : l.get(0);
            });
    assertEquals(2, second.attempt());
  }

  @Test
  void noRetryFailsForGood() {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(5));
    DequeuedJob d = client.dequeue(q, 1, null).get(0);
    client.ack(q, List.of(Ack.failure(d, "bad input", null, true)));
    Job j = job(id);
    assertEquals(JobState.FAILED, j.state());
    assertNotNull(j.finishedAt());
  }

  @Test
  void acksPiggyBackOnDequeue() {
    String q = newQueue(QueueConfig.defaults());
    List<String> ids = client.enqueue(List.of(JobSpec.of(q, "1"), JobSpec.of(q, "2")));
    DequeuedJob first = client.dequeue(q, 1, null).get(0);
    DequeueResult r = client.dequeue(q, 1, null, "test-worker", List.of(Ack.success(first)));
    assertEquals(List.of(new JobOutcome(first.jobId(), AckOutcome.ACKNOWLEDGED)), r.ackOutcomes());
    assertEquals(1, r.jobs().size());
    assertEquals(JobState.SUCCEEDED, job(first.jobId()).state());
    assertTrue(ids.contains(r.jobs().get(0).jobId()));

    // The ack is applied even when nothing is handed out.
    DequeueResult last = client.dequeue(q, 1, null, "", List.of(Ack.success(r.jobs().get(0))));
    assertTrue(last.jobs().isEmpty());
    assertEquals(AckOutcome.ACKNOWLEDGED, last.ackOutcomes().get(0).outcome());
  }

  @Test
  void peekClaimsNothing() {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "look"));
    List<DequeuedJob> peeked = client.peek(q, 5);
    assertEquals(1, peeked.size());
    assertEquals("look", peeked.get(0).bodyUtf8());
    assertTrue(peeked.get(0).claimToken().isEmpty());
    assertEquals(JobState.PENDING, job(id).state());
  }

  @Test
  void dequeueOrdersByPriorityThenAge() {
    String q = newQueue(QueueConfig.defaults());
    List<String> ids =
        client.enqueue(
            List.of(
                JobSpec.of(q, "low").withPriority(3),
                JobSpec.of(q, "high-old").withPriority(1),
                JobSpec.of(q, "high-new").withPriority(1)));
    List<DequeuedJob> got = client.dequeue(q, 3, null);
    assertEquals(
        List.of(ids.get(1), ids.get(2), ids.get(0)), got.stream().map(DequeuedJob::jobId).toList());
  }

  @Test
  void longPollReturnsWhenAJobArrives() throws Exception {
    String q = newQueue(QueueConfig.defaults());
    CompletableFuture<List<DequeuedJob>> poll =
        CompletableFuture.supplyAsync(() -> client.dequeue(q, 1, Duration.ofSeconds(10)));
    Thread.sleep(200); // let the poll reach the server first
    long start = System.nanoTime();
    client.enqueue(JobSpec.of(q, "wake up"));
    List<DequeuedJob> got = poll.get(8, TimeUnit.SECONDS);
    assertEquals(1, got.size());
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "woken by the enqueue");
  }

  @Test
  void longPollReturnsEmptyWhenWaitRunsOut() {
    String q = newQueue(QueueConfig.defaults());
    long start = System.nanoTime();
    assertTrue(client.dequeue(q, 1, Duration.ofMillis(300)).isEmpty());
    assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(250));
  }

  @Test
  void checkpointRenewsExtendsAndReplacesBody() throws Exception {
    String q = newQueue(QueueConfig.builder().claimTimeout(Duration.ofMillis(400)).build());
    String id = client.enqueue(JobSpec.of(q, "v1"));
    DequeuedJob d = client.dequeue(q, 1, null).get(0);

    assertEquals(
        List.of(new JobOutcome(id, AckOutcome.ACKNOWLEDGED)),
        client.checkpoint(
            q,
            List.of(
                Checkpoint.extendBy(d, Duration.ofSeconds(30))
                    .withNewBody("v2".getBytes())
                    .withCustomStatus("step 1"))));
    Job j = job(id);
    assertEquals("v2", j.bodyUtf8());
    assertTrue(j.customStatus().contains("step 1"));
    assertTrue(j.claimExpiresAt().isAfter(Instant.now().plusSeconds(20)));

    // A bare checkpoint renews for the queue's claim timeout (400 ms).
    assertEquals(
        AckOutcome.ACKNOWLEDGED,
        client.checkpoint(q, List.of(Checkpoint.renew(d))).get(0).outcome());
    assertTrue(job(id).claimExpiresAt().isBefore(Instant.now().plusSeconds(5)));
    assertEquals(AckOutcome.ACKNOWLEDGED, client.ack(q, List.of(Ack.success(d))).get(0).outcome());
  }

  @Test
  void checkpointMoveToPendingChargesNoAttempt() {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "cron").withAttemptsAllowed(2));
    DequeuedJob d = client.dequeue(q, 1, null).get(0);
    Instant runAfter = Instant.now().plusSeconds(60);
    client.checkpoint(q, List.of(Checkpoint.moveToPending(d, runAfter)));
    Job j = job(id);
    assertEquals(JobState.PENDING, j.state());
    assertEquals(2, j.attemptsRemaining());
    assertTrue(j.runAfter().isAfter(runAfter.minusSeconds(2)));
    // The old claim is gone.
    assertEquals(AckOutcome.STALE_CLAIM, client.ack(q, List.of(Ack.success(d))).get(0).outcome());
  }

  @Test
  void checkpointResetsAttempts() {
    String q = newQueue(QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(2));
    DequeuedJob d = client.dequeue(q, 1, null).get(0);
    client.checkpoint(q, List.of(Checkpoint.renew(d).withAttemptsAllowed(5)));
    Job j = job(id);
    assertEquals(5, j.attemptsAllowed());
    assertEquals(4, j.attemptsRemaining(), "the running attempt counts as one of the five");
  }

  @Test
  void expiredClaimCountsAsFailedAttemptAndStaleAckIsRefused() {
    String q =
        newQueue(
            QueueConfig.builder()
                .claimTimeout(Duration.ofMillis(300))
                .retryPolicy(new QueueRetryPolicy(Duration.ofMillis(100), 5, Duration.ofSeconds(1)))
                .build());
    String id = client.enqueue(JobSpec.of(q, "slow").withAttemptsAllowed(3));
    DequeuedJob first = client.dequeue(q, 1, null).get(0);

    // The claim times out; the job comes back (after the retry delay) as attempt 2.
    DequeuedJob second =
        Await.value(
            Duration.ofSeconds(10),
            "the job to be handed out again",
            () -> {
              List<DequeuedJob> l = client.dequeue(q, 1, Duration.ofMillis(500));
              return l.isEmpty() ? null : l.get(0);
            });
    assertEquals(id, second.jobId());
    assertEquals(2, second.attempt());

    List<JobOutcome> stale =
        client.ack(q, List.of(Ack.success(first), Ack.failure(first, "late", null, false)));
    assertEquals(AckOutcome.STALE_CLAIM, stale.get(0).outcome());
    assertEquals(AckOutcome.STALE_CLAIM, stale.get(1).outcome());
    assertEquals(
        AckOutcome.STALE_CLAIM,
        client.checkpoint(q, List.of(Checkpoint.renew(first))).get(0).outcome());
    assertEquals(JobState.RUNNING, job(id).state(), "the stale ack changed nothing");

    assertEquals(
        AckOutcome.ACKNOWLEDGED, client.ack(q, List.of(Ack.success(second))).get(0).outcome());
    assertEquals(JobState.SUCCEEDED, job(id).state());
  }

  @Test
  void unknownJobIsNotFound() {
    String q = newQueue(QueueConfig.defaults());
    DequeuedJob ghost =
        new DequeuedJob(q, "no-such-job", new byte[0], 1, 1, 1, "token", null, null, "", "");
    assertEquals(AckOutcome.NOT_FOUND, client.ack(q, List.of(Ack.success(ghost))).get(0).outcome());
  }

  @Test
  void dequeuesBigBodiesPastGrpcsDefaultMessageLimit() {
    // gRPC clients refuse messages over 4 MiB by default: the server caps the bodies of one
    // Dequeue answer below that (at least one job), and this client accepts one big job.
    String q = newQueue(QueueConfig.builder().maxBodyBytes(8 * 1024 * 1024).build());
    byte[] mib = new byte[1024 * 1024];
    List<String> ids = client.enqueue(Collections.nCopies(5, JobSpec.of(q, mib)));
    String big = client.enqueue(JobSpec.of(q, new byte[6 * 1024 * 1024]));
    List<String> got = new ArrayList<>();
    for (int call = 0; call < 10 && got.size() < 6; call++) {
      List<DequeuedJob> jobs = client.dequeue(q, 10, null);
      int bytes = jobs.stream().mapToInt(j -> j.body().length).sum();
      assertTrue(
          bytes <= 3 * 1024 * 1024 || jobs.size() == 1, "answer bodies: at most 3 MiB, or one job");
      jobs.forEach(j -> got.add(j.jobId()));
    }
    List<String> all = new ArrayList<>(ids);
    all.add(big);
    assertEquals(all, got);
  }
}
