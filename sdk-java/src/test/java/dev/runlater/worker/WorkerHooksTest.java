package dev.runlater.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.Await;
import dev.runlater.JobSpec;
import dev.runlater.JobState;
import dev.runlater.QueueConfig;
import dev.runlater.ServerTest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** What a worker tells its operator, and where it runs handlers. */
class WorkerHooksTest extends ServerTest {
  private static final Duration WAIT = Duration.ofSeconds(15);

  /** The SDK logs through System.Logger, which goes to java.util.logging by default. */
  private static final Logger RUNNER_LOG = Logger.getLogger(QueueRunner.class.getName());

  /** Collects the records logged while it is attached. */
  private static final class Records extends Handler implements AutoCloseable {
    final List<LogRecord> records = new CopyOnWriteArrayList<>();

    Records() {
      RUNNER_LOG.addHandler(this);
    }

    @Override
    public void publish(LogRecord r) {
      records.add(r);
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
      RUNNER_LOG.removeHandler(this);
    }

    List<LogRecord> warningsAbout(String jobId) {
      return records.stream()
          .filter(r -> r.getLevel() == Level.WARNING && r.getMessage().contains(jobId))
          .toList();
    }
  }

  @Test
  void aHandlerFailureIsLoggedOnceAtWarningWithItsStackTrace() {
    String q = newQueue("logs", QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x").withAttemptsAllowed(1));
    AtomicReference<Exception> thrown = new AtomicReference<>();
    try (Records log = new Records();
        Worker w = Worker.builder(client).build()) {
      w.register(
          q,
          job -> {
            IllegalStateException e = new IllegalStateException("disk full");
            thrown.set(e);
            throw e;
          });
      w.start();
      Await.until(
          WAIT,
          "the job to fail",
          () -> client.getJob(id, false).orElseThrow().state() == JobState.FAILED);
      List<LogRecord> warnings = log.warningsAbout(id);
      assertEquals(1, warnings.size(), "warnings: " + warnings);
      assertSame(thrown.get(), warnings.get(0).getThrown(), "the stack trace comes with it");
    }
  }

  @Test
  void retryAfterAndDoNotRetryAreDecisionsNotWarnings() {
    String q = newQueue("logs_quiet", QueueConfig.defaults());
    String later = client.enqueue(JobSpec.of(q, "later").withAttemptsAllowed(2));
    String never = client.enqueue(JobSpec.of(q, "never"));
    try (Records log = new Records();
        Worker w = Worker.builder(client).build()) {
      w.register(
          q,
          job -> {
            if (job.bodyUtf8().equals("later")) {
              throw new RetryAfter(Duration.ofMinutes(5), "busy");
            }
            throw new DoNotRetry("bad input");
          });
      w.start();
      Await.until(
          WAIT,
          "both outcomes to be applied",
          () ->
              client.getJob(never, false).orElseThrow().state() == JobState.FAILED
                  && client.getJob(later, false).orElseThrow().attemptsRemaining() == 1);
      assertEquals(List.of(), log.warningsAbout(later));
      assertEquals(List.of(), log.warningsAbout(never));
    }
  }

  @Test
  void handlersRunOnThreadsFromTheGivenFactory() {
    String q = newQueue("threads", QueueConfig.defaults());
    String id = client.enqueue(JobSpec.of(q, "x"));
    AtomicInteger made = new AtomicInteger();
    // A stand-in for Thread.ofVirtual().factory(), which needs Java 21.
    ThreadFactory factory =
        r -> {
          Thread t = new Thread(r, "custom-handler-" + made.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    AtomicReference<String> ranOn = new AtomicReference<>();
    try (Worker w = Worker.builder(client).handlerThreadFactory(factory).build()) {
      w.register(
          q,
          job -> {
            ranOn.set(Thread.currentThread().getName());
            return JobResult.success();
          });
      w.start();
      Await.until(
          WAIT,
          "the job to succeed",
          () -> client.getJob(id, false).orElseThrow().state() == JobState.SUCCEEDED);
    }
    assertTrue(ranOn.get().startsWith("custom-handler-"), "ran on " + ranOn.get());
    assertTrue(made.get() >= 1);
  }
}
