package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class QueueAdminTest extends ServerTest {
  @Test
  void createsQueueWithDefaultsAndIsIdempotent() {
    String name = TestServer.queueName("admin");
    CreateQueueResult first = client.createQueue(name, QueueConfig.defaults());
    assertTrue(first.created());
    assertEquals(name, first.queue().name());
    QueueConfig c = first.queue().config();
    assertEquals(3, c.priorities());
    assertEquals(Duration.ofMinutes(5), c.claimTimeout());
    assertEquals(11, c.defaultAttemptsAllowed());
    assertEquals(QueueRetryPolicy.pinLaterDefault(), c.retryPolicy());
    assertEquals(Duration.ofDays(1), c.succeededRetention());
    assertEquals(Duration.ofDays(7), c.failedRetention());
    assertEquals(1, c.partitions());
    assertEquals(1 << 20, c.maxBodyBytes());
    assertFalse(c.paused());
    assertFalse(c.fifo());

    CreateQueueResult again = client.createQueue(name, QueueConfig.builder().priorities(5).build());
    assertFalse(again.created());
    assertEquals(3, again.queue().config().priorities(), "existing queue left unchanged");
  }

  @Test
  void createsQueueWithGivenConfig() {
    String name = TestServer.queueName("admin");
    QueueConfig config =
        QueueConfig.builder()
            .priorities(5)
            .claimTimeout(Duration.ofMillis(300))
            .retryPolicy(new QueueRetryPolicy(Duration.ofSeconds(1), 2, Duration.ofMinutes(1)))
            .defaultAttemptsAllowed(3)
            .maxDequeuePerSecond(100)
            .fifo(true)
            .maxBodyBytes(1024)
            .build();
    Queue q = client.createQueue(name, config).queue();
    assertEquals(5, q.config().priorities());
    assertEquals(Duration.ofMillis(300), q.config().claimTimeout());
    assertEquals(
        new QueueRetryPolicy(Duration.ofSeconds(1), 2, Duration.ofMinutes(1)),
        q.config().retryPolicy());
    assertEquals(3, q.config().defaultAttemptsAllowed());
    assertEquals(100.0, q.config().maxDequeuePerSecond());
    assertTrue(q.config().fifo());
    assertEquals(1024, q.config().maxBodyBytes());
  }

  @Test
  void getsListsUpdatesAndDeletesQueue() {
    String name = TestServer.queueName("admin");
    client.createQueue(name, QueueConfig.defaults());
    client.enqueue(JobSpec.of(name, "x"));

    Queue got = client.getQueue(name);
    assertEquals(name, got.name());
    assertEquals(1, got.stats().pending());

    assertTrue(client.listQueues().stream().anyMatch(q -> q.name().equals(name)));

    Queue updated =
        client.updateQueue(
            name, QueueConfig.builder().paused(true).maxDequeuePerSecond(7.5).build());
    assertTrue(updated.config().paused());
    assertEquals(7.5, updated.config().maxDequeuePerSecond());
    assertEquals(3, updated.config().priorities(), "fields outside the mask unchanged");
    // A paused queue hands out nothing.
    assertTrue(client.dequeue(name, 10, null).isEmpty());
    client.updateQueue(name, QueueConfig.builder().paused(false).build());
    assertEquals(1, client.dequeue(name, 10, null).size());

    assertTrue(client.deleteQueue(name));
    assertFalse(client.deleteQueue(name));
    RunlaterException e = assertThrows(RunlaterException.class, () -> client.getQueue(name));
    assertEquals(Status.Code.NOT_FOUND, e.code());
    assertEquals(ErrorReason.QUEUE_NOT_FOUND, e.reason());
  }

  @Test
  void updateNeedsAField() {
    assertThrows(
        IllegalArgumentException.class,
        () -> client.updateQueue(TestServer.queueName("admin"), QueueConfig.defaults()));
  }

  @Test
  void rejectsInvalidQueueName() {
    RunlaterException e =
        assertThrows(
            RunlaterException.class,
            () -> client.createQueue("no spaces-or-dashes", QueueConfig.defaults()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals(ErrorReason.INVALID_QUEUE_NAME, e.reason());
  }

  @Test
  void rejectsTooShortClaimTimeout() {
    RunlaterException e =
        assertThrows(
            RunlaterException.class,
            () ->
                client.createQueue(
                    TestServer.queueName("admin"),
                    QueueConfig.builder().claimTimeout(Duration.ofMillis(50)).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
  }
}
