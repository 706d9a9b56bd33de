package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The producer and operator side: JobService. */
class JobsTest extends ServerTest {
  private static String newQueue() {
    return newQueue("jobs", QueueConfig.defaults());
  }

  @Test
  void enqueuesOneJobAndGetsItBack() {
    String q = newQueue();
    byte[] body = {0, 1, 2, (byte) 0xff};
    String id =
        client.enqueue(
            JobSpec.of(q, body).withPriority(2).withAttemptsAllowed(4).withCustomStatus("new"));

    Job job = client.getJob(id, true).orElseThrow();
    assertEquals(id, job.jobId());
    assertEquals(q, job.queue());
    assertEquals(JobState.PENDING, job.state());
    assertEquals(2, job.priority());
    assertArrayEquals(body, job.body());
    assertEquals(4, job.attemptsAllowed());
    assertEquals(4, job.attemptsRemaining());
    assertEquals("new", job.customStatus());
    assertNotNull(job.createdAt());
    assertNotNull(job.runAfter());
    assertNull(job.claimExpiresAt());
    assertNull(job.finishedAt());

    assertEquals(0, client.getJob(id, false).orElseThrow().body().length, "body only on request");
  }

  @Test
  void enqueuesBatchInOrderAndReportsUnknownIds() {
    String q = newQueue();
    List<JobSpec> specs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      specs.add(JobSpec.of(q, "job-" + i));
    }
    List<String> ids = client.enqueue(specs);
    assertEquals(5, ids.size());
    assertEquals(5, new HashSet<>(ids).size());

    List<String> lookup = new ArrayList<>(ids);
    lookup.add(2, "no-such-job");
    List<Job> jobs = client.getJobs(lookup, true);
    assertEquals(5, jobs.size());
    for (int i = 0; i < 5; i++) {
      assertEquals(ids.get(i), jobs.get(i).jobId());
      assertEquals("job-" + i, jobs.get(i).bodyUtf8());
    }
    assertTrue(client.getJob("no-such-job", false).isEmpty());
  }

  @Test
  void idempotencyKeyReturnsTheFirstJob() {
    String q = newQueue();
    String first = client.enqueue(JobSpec.of(q, "a").withIdempotencyKey("order-42"));
    String again = client.enqueue(JobSpec.of(q, "b").withIdempotencyKey("order-42"));
    assertEquals(first, again);
    assertEquals(1, client.countJobs(JobFilter.queue(q)));
  }

  @Test
  void orderingKeyRoundTrips() {
    String q = newQueue();
    List<String> ids =
        client.enqueue(
            List.of(
                JobSpec.of(q, "a").withOrderingKey("customer-7"),
                JobSpec.of(q, "b").withOrderingKey("customer-8"),
                JobSpec.of(q, "c")));
    assertEquals(
        List.of("customer-7", "customer-8", ""),
        client.getJobs(ids, false).stream().map(Job::orderingKey).toList());
    Map<String, String> scanned = new HashMap<>();
    client
        .scanJobs(JobFilter.queue(q))
        .jobs()
        .forEach(j -> scanned.put(j.jobId(), j.orderingKey()));
    assertEquals(
        Map.of(ids.get(0), "customer-7", ids.get(1), "customer-8", ids.get(2), ""), scanned);
  }

  @Test
  void sameOrderingKeyWaitsForTheJobBeforeIt() {
    String q = newQueue();
    List<String> ids =
        client.enqueue(
            List.of(
                JobSpec.of(q, "1").withOrderingKey("k"), JobSpec.of(q, "2").withOrderingKey("k")));
    List<DequeuedJob> got = client.dequeue(q, 10, null);
    assertEquals(List.of(ids.get(0)), got.stream().map(DequeuedJob::jobId).toList());
    assertTrue(client.dequeue(q, 10, null).isEmpty(), "the second waits for the first");
    assertEquals(JobState.PENDING, client.getJob(ids.get(1), false).orElseThrow().state());

    client.ack(q, List.of(Ack.success(got.get(0))));
    assertEquals(
        List.of(ids.get(1)), client.dequeue(q, 10, null).stream().map(DequeuedJob::jobId).toList());
  }

  @Test
  void differentOrderingKeysRunInParallel() {
    String q = newQueue();
    List<String> ids =
        client.enqueue(
            List.of(
                JobSpec.of(q, "a1").withOrderingKey("a"),
                JobSpec.of(q, "b1").withOrderingKey("b"),
                JobSpec.of(q, "a2").withOrderingKey("a"),
                JobSpec.of(q, "none")));
    Set<String> got = new HashSet<>();
    client.dequeue(q, 10, null).forEach(j -> got.add(j.jobId()));
    assertEquals(Set.of(ids.get(0), ids.get(1), ids.get(3)), got);
  }

  @Test
  void fifoQueueRunsOneJobAtATimeInEnqueueOrder() {
    String q = newQueue("fifo", QueueConfig.builder().fifo(true).priorities(3).build());
    List<String> ids =
        client.enqueue(
            List.of(
                JobSpec.of(q, "1").withPriority(3),
                JobSpec.of(q, "2").withPriority(1).withOrderingKey("ignored"),
                JobSpec.of(q, "3").withPriority(2)));
    assertEquals(
        List.of("", "", ""), client.getJobs(ids, false).stream().map(Job::orderingKey).toList());
    for (String id : ids) {
      List<DequeuedJob> got = client.dequeue(q, 10, null);
      assertEquals(List.of(id), got.stream().map(DequeuedJob::jobId).toList());
      client.ack(q, List.of(Ack.success(got.get(0))));
    }
    assertTrue(client.dequeue(q, 10, null).isEmpty());
  }

  @Test
  void badBatchWritesNothing() {
    String q = newQueue();
    RunlaterException e =
        assertThrows(
            RunlaterException.class,
            () ->
                client.enqueue(List.of(JobSpec.of(q, "ok"), JobSpec.of(q, "bad").withPriority(9))));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals(ErrorReason.INVALID_PRIORITY, e.reason());
    assertEquals("jobs[1].priority", e.field());
    assertEquals(0, client.countJobs(JobFilter.queue(q)));
  }

  @Test
  void enqueueToMissingQueueIsNotFound() {
    RunlaterException e =
        assertThrows(
            RunlaterException.class,
            () -> client.enqueue(JobSpec.of(TestServer.queueName("missing"), "x")));
    assertEquals(Status.Code.NOT_FOUND, e.code());
    assertEquals(ErrorReason.QUEUE_NOT_FOUND, e.reason());
  }

  @Test
  void tooLargeBodyIsRefused() {
    String q = TestServer.queueName("jobs");
    client.createQueue(q, QueueConfig.builder().maxBodyBytes(16).build());
    RunlaterException e =
        assertThrows(RunlaterException.class, () -> client.enqueue(JobSpec.of(q, new byte[17])));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
    assertEquals(ErrorReason.BODY_TOO_LARGE, e.reason());
  }

  @Test
  void scansPageByPageNewestRunAfterFirst() {
    String q = newQueue();
    Instant base = Instant.now().minusSeconds(100);
    List<JobSpec> specs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      specs.add(JobSpec.of(q, "job-" + i).withRunAfter(base.plusSeconds(i)));
    }
    List<String> ids = client.enqueue(specs);

    List<String> seen = new ArrayList<>();
    String token = "";
    int pages = 0;
    do {
      JobPage page =
          client.scanJobs(
              JobFilter.queue(q),
              ScanOptions.builder().pageSize(2).pageToken(token).includeBody(true).build());
      page.jobs().forEach(j -> seen.add(j.jobId()));
      token = page.nextPageToken();
      pages++;
    } while (!token.isEmpty() && pages < 10);
    assertEquals(3, pages);
    assertEquals(List.of(ids.get(4), ids.get(3), ids.get(2), ids.get(1), ids.get(0)), seen);
  }

  @Test
  void scansAndCountsWithFilters() {
    String q = newQueue();
    Instant later = Instant.now().plus(Duration.ofHours(1));
    client.enqueue(
        List.of(
            JobSpec.of(q, "apple").withPriority(1),
            JobSpec.of(q, "banana").withPriority(2),
            JobSpec.of(q, "cherry").withPriority(2).withRunAfter(later)));

    assertEquals(3, client.countJobs(JobFilter.queue(q)));
    assertEquals(3, client.countJobs(JobFilter.queue(q).withState(JobState.PENDING)));
    assertEquals(0, client.countJobs(JobFilter.queue(q).withState(JobState.RUNNING)));
    assertEquals(2, client.countJobs(JobFilter.queue(q).withPriority(2)));
    assertEquals(1, client.countJobs(JobFilter.queue(q).withFuture(true)));
    assertEquals(2, client.countJobs(JobFilter.queue(q).withFuture(false)));
    assertEquals(2, client.countJobs(JobFilter.queue(q).withBodyRegex("^(b|c)")));

    List<Job> future =
        client
            .scanJobs(
                JobFilter.queue(q).withFuture(true),
                ScanOptions.builder().includeBody(true).build())
            .jobs();
    assertEquals(1, future.size());
    assertEquals("cherry", future.get(0).bodyUtf8());
  }

  @Test
  void retriesAndDeletesFailedJobs() {
    String q = newQueue();
    List<String> ids =
        client.enqueue(
            List.of(
                JobSpec.of(q, "a").withAttemptsAllowed(1),
                JobSpec.of(q, "b").withAttemptsAllowed(1),
                JobSpec.of(q, "c").withAttemptsAllowed(1)));
    List<DequeuedJob> got = client.dequeue(q, 3, null);
    assertEquals(3, got.size());
    List<Ack> failures = new ArrayList<>();
    for (DequeuedJob j : got) {
      failures.add(Ack.failure(j, "boom", null, false));
    }
    client.ack(q, failures);
    assertEquals(3, client.countJobs(JobFilter.queue(q).withState(JobState.FAILED)));

    assertEquals(
        1,
        client.retryFailedJobs(
            q, RetryFailedOptions.builder().attemptsAllowed(5).limit(1).build()));
    assertEquals(1, client.countJobs(JobFilter.queue(q).withState(JobState.PENDING)));
    Job retried = client.scanJobs(JobFilter.queue(q).withState(JobState.PENDING)).jobs().get(0);
    assertEquals(5, retried.attemptsAllowed());
    assertTrue(ids.contains(retried.jobId()));

    assertEquals(1, client.deleteJobs(JobFilter.queue(q).withState(JobState.FAILED), 1));
    assertEquals(1, client.countJobs(JobFilter.queue(q).withState(JobState.FAILED)));
    assertEquals(1, client.retryFailedJobs(q));
    assertEquals(0, client.countJobs(JobFilter.queue(q).withState(JobState.FAILED)));
    assertEquals(2, client.deleteJobs(JobFilter.queue(q).withState(JobState.PENDING)));
    assertEquals(0, client.countJobs(JobFilter.queue(q)));
  }

  @Test
  void deleteNeedsAState() {
    assertThrows(IllegalArgumentException.class, () -> client.deleteJobs(JobFilter.queue("any")));
  }

  @Test
  void scheduledJobIsNotDueYet() {
    String q = newQueue();
    String id =
        client.enqueue(JobSpec.of(q, "later").withRunAfter(Instant.now().plusSeconds(3600)));
    assertTrue(client.dequeue(q, 1, null).isEmpty());
    Job job = client.getJob(id, false).orElseThrow();
    assertTrue(job.runAfter().isAfter(Instant.now().plusSeconds(3500)));
    Set<String> peeked = new HashSet<>();
    client.peek(q, 10).forEach(j -> peeked.add(j.jobId()));
    assertFalse(peeked.contains(id));
  }
}
