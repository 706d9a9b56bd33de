package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.runlater.worker.DoNotRetry;
import dev.runlater.worker.JobResult;
import dev.runlater.worker.RetryAfter;
import dev.runlater.worker.Worker;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The README's example, compiled and run by the build so it cannot rot. Keep the code between the
 * markers identical to README.md.
 */
class ExampleTest {
  @Test
  void readmeExampleRuns() throws Exception {
    String target = TestServer.target();
    String queue = TestServer.queueName("emails");

    // --- README example start ---
    try (RunlaterClient client = RunlaterClient.builder(target).build()) {
      client.createQueue(queue, QueueConfig.builder().claimTimeout(Duration.ofMinutes(1)).build());
      String id = client.enqueue(JobSpec.of(queue, "alice@example.com"));

      try (Worker worker = Worker.builder(client).concurrency(4).build()) {
        worker.register(
            queue,
            job -> {
              String to = job.bodyUtf8();
              if (to.isBlank()) {
                throw new DoNotRetry("no address"); // FAILED, no retry
              }
              if (to.endsWith("@busy.example")) {
                throw new RetryAfter(Duration.ofMinutes(1), "busy"); // retry in a minute
              }
              return JobResult.success("sent to " + to); // SUCCEEDED
            });
        worker.start();
        // ... run until shutdown; close() drains running jobs.
        // --- README example end ---
        Await.until(
            Duration.ofSeconds(15),
            "the example job to succeed",
            () -> client.getJob(id, false).orElseThrow().state() == JobState.SUCCEEDED);
      }
      assertEquals(
          "sent to alice@example.com", client.getJob(id, false).orElseThrow().customStatus());
    }
  }
}
