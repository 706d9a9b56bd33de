package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The CompletableFuture calls: the same behaviour as the blocking ones, without blocking. */
class AsyncClientTest extends ServerTest {
  private static <T> T await(CompletableFuture<T> f) throws Exception {
    return f.get(10, TimeUnit.SECONDS);
  }

  @Test
  void enqueueGetDequeueAck() throws Exception {
    String q = newQueue("async", QueueConfig.defaults());
    AsyncRunlaterClient async = client.async();

    String id = await(async.enqueue(JobSpec.of(q, "hello").withAttemptsAllowed(2)));
    Job pending = await(async.getJob(id, true)).orElseThrow();
    assertEquals(JobState.PENDING, pending.state());
    assertEquals("hello", pending.bodyUtf8());

    List<DequeuedJob> got = await(async.dequeue(q, 5, Duration.ofSeconds(1)));
    assertEquals(1, got.size());
    assertEquals(id, got.get(0).jobId());

    List<JobOutcome> out = await(async.ack(q, List.of(Ack.success(got.get(0), "done"))));
    assertEquals(List.of(new JobOutcome(id, AckOutcome.ACKNOWLEDGED)), out);
    assertEquals(JobState.SUCCEEDED, await(async.getJob(id, false)).orElseThrow().state());
    assertTrue(await(async.getJob("no-such-job", false)).isEmpty());
  }

  @Test
  void aLongPollWaitsForAJobWithoutBlockingTheCaller() throws Exception {
    String q = newQueue("async_poll", QueueConfig.defaults());
    CompletableFuture<DequeueResult> poll =
        client
            .async()
            .dequeue(
                q,
                DequeueOptions.builder()
                    .maxWait(Duration.ofSeconds(10))
                    .workerId("async-test")
                    .build());
    assertTrue(!poll.isDone(), "nothing is due yet");
    String id = client.enqueue(JobSpec.of(q, "late"));
    assertEquals(id, await(poll).jobs().get(0).jobId());
  }

  @Test
  void failuresCompleteExceptionallyWithTheirFamily() {
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () -> await(client.async().enqueue(JobSpec.of(TestServer.queueName("none"), "x"))));
    NotFoundException cause = assertInstanceOf(NotFoundException.class, e.getCause());
    assertEquals(ErrorReason.QUEUE_NOT_FOUND, cause.reason());
  }

  @Test
  void cancellingTheFutureCancelsTheCall() throws Exception {
    String q = newQueue("async_cancel", QueueConfig.defaults());
    CountDownLatch cancelled = new CountDownLatch(1);
    ClientInterceptor watch =
        new ClientInterceptor() {
          @Override
          public <Q, R> ClientCall<Q, R> interceptCall(
              MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
            return new ForwardingClientCall.SimpleForwardingClientCall<>(
                next.newCall(method, options)) {
              @Override
              public void cancel(String message, Throwable cause) {
                cancelled.countDown();
                super.cancel(message, cause);
              }
            };
          }
        };
    try (RunlaterClient c = RunlaterClient.builder(TestServer.target()).intercept(watch).build()) {
      CompletableFuture<List<DequeuedJob>> poll = c.async().dequeue(q, 1, Duration.ofSeconds(30));
      assertTrue(poll.cancel(true));
      assertTrue(cancelled.await(5, TimeUnit.SECONDS), "the long poll was cancelled");
    }
  }
}
