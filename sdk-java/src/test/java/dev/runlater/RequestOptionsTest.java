package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** The option builders of dequeue, scanJobs and retryFailedJobs: defaults, checks, effect. */
class RequestOptionsTest extends ServerTest {

  private static String refusal(Executable build) {
    return assertThrows(IllegalArgumentException.class, build).getMessage();
  }

  @Test
  void defaultsAreTheServersDefaults() {
    DequeueOptions dequeue = DequeueOptions.builder().build();
    assertEquals(new DequeueOptions(1, Duration.ZERO, "", List.of()), dequeue);
    assertEquals(new ScanOptions(0, "", false), ScanOptions.defaults());
    assertEquals(new RetryFailedOptions(0, 0, null, 0), RetryFailedOptions.builder().build());
  }

  @Test
  void negativeValuesAreRefusedByName() {
    assertEquals(
        "limit must not be negative, got -1",
        refusal(() -> DequeueOptions.builder().limit(-1).build()));
    assertEquals(
        "maxWait must not be negative, got PT-1S",
        refusal(() -> DequeueOptions.builder().maxWait(Duration.ofSeconds(-1)).build()));
    assertEquals(
        "pageSize must not be negative, got -5",
        refusal(() -> ScanOptions.builder().pageSize(-5).build()));
    assertEquals(
        "attemptsAllowed must not be negative, got -2",
        refusal(() -> RetryFailedOptions.builder().attemptsAllowed(-2).build()));
    assertEquals(
        "limit must not be negative, got -1",
        refusal(() -> client.deleteJobs(JobFilter.queue("any").withState(JobState.FAILED), -1)));
  }

  @Test
  void optionsCopyTheirLists() {
    List<Ack> acks = new java.util.ArrayList<>();
    DequeueOptions options = DequeueOptions.builder().acks(acks).build();
    acks.add(new Ack("q.0.1", "token", true, "", null, false));
    assertTrue(options.acks().isEmpty());
  }

  @Test
  void retryFailedJobsAppliesEveryOption() {
    String q = newQueue("retryopts", QueueConfig.builder().priorities(3).build());
    client.enqueue(
        List.of(
            JobSpec.of(q, "p1").withAttemptsAllowed(1),
            JobSpec.of(q, "p2").withPriority(2).withAttemptsAllowed(1),
            JobSpec.of(q, "p2 too").withPriority(2).withAttemptsAllowed(1)));
    for (DequeuedJob job : client.dequeue(q, 3, null)) {
      client.ack(q, List.of(Ack.failure(job, "boom", null, true)));
    }
    Instant later =
        Instant.now().plusSeconds(3600).truncatedTo(java.time.temporal.ChronoUnit.MILLIS);

    long moved =
        client.retryFailedJobs(
            q,
            RetryFailedOptions.builder()
                .priority(2)
                .attemptsAllowed(4)
                .runAfter(later)
                .limit(1)
                .build());

    assertEquals(1, moved);
    Job retried = client.scanJobs(JobFilter.queue(q).withState(JobState.PENDING)).jobs().get(0);
    assertEquals(2, retried.priority());
    assertEquals(4, retried.attemptsAllowed());
    assertEquals(later, retried.runAfter());
    assertEquals(2, client.countJobs(JobFilter.queue(q).withState(JobState.FAILED)));
  }

  @Test
  void dequeueOptionsCarryTheAcksAndTheWait() {
    String q = newQueue("dequeueopts", QueueConfig.defaults());
    client.enqueue(List.of(JobSpec.of(q, "a"), JobSpec.of(q, "b")));
    DequeuedJob a = client.dequeue(q, DequeueOptions.builder().build()).jobs().get(0);

    DequeueResult next =
        client.dequeue(
            q,
            DequeueOptions.builder()
                .limit(5)
                .workerId("options-test")
                .acks(List.of(Ack.success(a)))
                .build());

    assertEquals(
        List.of(AckOutcome.ACKNOWLEDGED),
        next.ackOutcomes().stream().map(JobOutcome::outcome).toList());
    assertEquals(List.of("b"), next.jobs().stream().map(DequeuedJob::bodyUtf8).toList());
    long start = System.nanoTime();
    DequeueResult empty =
        client.dequeue(q, DequeueOptions.builder().maxWait(Duration.ofMillis(300)).build());
    assertTrue(empty.jobs().isEmpty());
    assertTrue(System.nanoTime() - start >= Duration.ofMillis(250).toNanos(), "it long-polled");
  }
}
