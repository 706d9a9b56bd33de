package dev.runlater.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.ErrorReason;
import dev.runlater.JobFilter;
import dev.runlater.JobSpec;
import dev.runlater.JobState;
import dev.runlater.NotFoundException;
import dev.runlater.QueueConfig;
import dev.runlater.RunlaterClient;
import dev.runlater.ServerTest;
import dev.runlater.UnavailableException;
import java.net.ServerSocket;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A worker started on a queue that does not exist, or against a server that is not there, fails at
 * once naming the queue and the server, and takes no job (the TypeScript and Python workers do the
 * same: conformance scenario worker-start-checks).
 */
class WorkerStartTest extends ServerTest {
  @Test
  void startFailsOnAQueueThatDoesNotExistNamingTheQueueAndTheServer() {
    String present = newQueue("present", QueueConfig.defaults());
    AtomicInteger calls = new AtomicInteger();
    try (Worker w = Worker.builder(client).build()) {
      w.register(present, job -> null);
      w.register(
          "no_such_queue",
          job -> {
            calls.incrementAndGet();
            return null;
          });
      NotFoundException e = assertThrows(NotFoundException.class, w::start);
      assertEquals(ErrorReason.QUEUE_NOT_FOUND, e.reason());
      assertTrue(
          e.description()
              .startsWith("worker cannot start on queue \"no_such_queue\" at " + client.target()),
          e.getMessage());
      assertTrue(e.description().contains("does not exist"), e.getMessage());
    }
    assertEquals(0, calls.get());
  }

  @Test
  void aWorkerClosedBeforeStartNeverStartsAndTakesNoJob() {
    String queue = newQueue("closed_first", QueueConfig.defaults());
    client.enqueue(JobSpec.of(queue, "job"));
    AtomicInteger calls = new AtomicInteger();
    Worker w = Worker.builder(client).build();
    w.register(
        queue,
        job -> {
          calls.incrementAndGet();
          return null;
        });
    w.close();
    IllegalStateException e = assertThrows(IllegalStateException.class, w::start);
    assertEquals("this worker was closed; create a new one", e.getMessage());
    assertEquals(0, calls.get());
    assertEquals(1, client.countJobs(JobFilter.queue(queue).withState(JobState.PENDING)));
  }

  @Test
  void startFailsWhenNoServerIsThere() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // taken from the OS and given back: nothing listens there
    }
    String target = "127.0.0.1:" + port;
    try (RunlaterClient nowhere = RunlaterClient.builder(target).build();
        Worker w = Worker.builder(nowhere).build()) {
      w.register("q", job -> null);
      UnavailableException e = assertThrows(UnavailableException.class, w::start);
      assertTrue(
          e.description().startsWith("worker cannot start on queue \"q\" at " + target),
          e.getMessage());
    }
  }
}
