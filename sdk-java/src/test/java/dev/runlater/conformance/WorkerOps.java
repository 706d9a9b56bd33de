package dev.runlater.conformance;

import dev.runlater.DequeuedJob;
import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import dev.runlater.worker.DequeueMode;
import dev.runlater.worker.DoNotRetry;
import dev.runlater.worker.JobHandler;
import dev.runlater.worker.JobResult;
import dev.runlater.worker.RetryAfter;
import dev.runlater.worker.Worker;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The driver's worker layer (ops {@code worker_*}, conformance/protocol.md): the SDK's own {@link
 * Worker}, one per actor, running the scripted handler (the job's body says what to do), on a clock
 * that reads the server's manual clock. No assertions: it reports what the worker did.
 */
final class WorkerOps {
  private static final long AWAIT_MS = 20_000;

  /** The server's clock (epoch ms), as the runner last said. */
  private volatile long nowMs = System.currentTimeMillis();

  private final Clock clock =
      new Clock() {
        @Override
        public ZoneId getZone() {
          return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
          return this;
        }

        @Override
        public Instant instant() {
          return Instant.ofEpochMilli(nowMs);
        }
      };

  /** Guards everything below; notified when a handler starts or returns or a worker stops. */
  private final Object changed = new Object();

  private final Map<String, Running> running = new HashMap<>();
  private final Map<String, CountDownLatch> gates = new HashMap<>();

  private static final class Running {
    final Worker worker;
    final RunlaterClient client;
    final List<Map<String, Object>> calls = new ArrayList<>();
    boolean stopped;
    Thread stopper;

    Running(Worker worker, RunlaterClient client) {
      this.worker = worker;
      this.client = client;
    }
  }

  void clock(long ms) {
    nowMs = ms;
  }

  /** {@code newClient}: a new client for the workers' URL, with the connect settings. */
  Map<String, Object> run(
      String op, String actor, Map<String, Object> r, Supplier<RunlaterClient> newClient)
      throws InterruptedException {
    Map<String, Object> out = new LinkedHashMap<>();
    switch (op) {
      case "worker_start" -> start(actor, r, newClient);
      case "worker_release" -> gate((String) r.get("gate")).countDown();
      case "worker_defaults" -> {
        try (RunlaterClient c = newClient.get();
            Worker w = Worker.builder(c).build()) {
          Worker.Settings s = w.settings();
          out.put("concurrency", s.concurrency());
          out.put("batch_size", s.batchSize() == 0 ? s.concurrency() : s.batchSize());
          out.put("dequeue_mode", s.dequeueMode().name().toLowerCase(Locale.ROOT));
          out.put("poll_wait_ms", s.pollWait().toMillis());
          out.put("shutdown_grace_ms", s.shutdownGrace().toMillis());
          out.put("ack_delay_ms", s.ackDelay().toMillis());
        }
      }
      case "worker_stop" -> {
        Running w = worker(actor);
        stop(w);
        if (!Boolean.FALSE.equals(r.get("wait"))) {
          await(() -> w.stopped);
        }
      }
      case "worker_await" -> {
        Running w = worker(actor);
        int calls = number(r.get("calls"));
        int finished = number(r.get("finished"));
        boolean stopped = Boolean.TRUE.equals(r.get("stopped"));
        await(
            () ->
                w.calls.size() >= calls
                    && w.calls.stream().filter(c -> (Boolean) c.get("finished")).count() >= finished
                    && (!stopped || w.stopped));
        synchronized (changed) {
          out.put("calls", w.calls.stream().map(LinkedHashMap::new).toList());
          out.put("stopped", w.stopped);
        }
      }
      default -> throw new IllegalArgumentException("unknown op " + op);
    }
    return out;
  }

  private void start(String actor, Map<String, Object> r, Supplier<RunlaterClient> newClient) {
    synchronized (changed) {
      if (running.containsKey(actor)) {
        throw new IllegalStateException(actor + " already runs a worker");
      }
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> o =
        r.get("options") == null ? Map.of() : (Map<String, Object>) r.get("options");
    RunlaterClient client = newClient.get();
    Worker.Builder b = Worker.builder(client).clock(clock);
    if (o.get("concurrency") != null) {
      b.concurrency(number(o.get("concurrency")));
    }
    if (o.get("batch_size") != null) {
      b.batchSize(number(o.get("batch_size")));
    }
    if (o.get("dequeue_mode") != null) {
      b.dequeueMode(DequeueMode.valueOf(((String) o.get("dequeue_mode")).toUpperCase(Locale.ROOT)));
    }
    if (o.get("poll_wait_ms") != null) {
      b.pollWait(Duration.ofMillis(number(o.get("poll_wait_ms"))));
    }
    if (o.get("shutdown_grace_ms") != null) {
      b.shutdownGrace(Duration.ofMillis(number(o.get("shutdown_grace_ms"))));
    }
    if (o.get("ack_delay_ms") != null) {
      b.ackDelay(Duration.ofMillis(number(o.get("ack_delay_ms"))));
    }
    Worker worker = b.build();
    Running w = new Running(worker, client);
    worker.register((String) r.get("queue"), handler(w));
    try {
      worker.start();
    } catch (RunlaterException e) {
      worker.close();
      client.close();
      throw e;
    }
    synchronized (changed) {
      running.put(actor, w);
    }
  }

  /** The scripted handler, recording each call. */
  private JobHandler handler(Running w) {
    return job -> {
      Map<String, Object> call = new LinkedHashMap<>();
      call.put("job_id", job.jobId());
      call.put("attempt", job.attempt());
      call.put("body_b64", Base64.getEncoder().encodeToString(job.body()));
      call.put("finished", false);
      call.put("workflow", WorkflowOps.contextJson(job.workflow()));
      synchronized (changed) {
        w.calls.add(call);
        changed.notifyAll();
      }
      try {
        return act(action(job.body()), job);
      } finally {
        synchronized (changed) {
          call.put("finished", true);
          changed.notifyAll();
        }
      }
    };
  }

  /** Does what the action says (conformance/protocol.ts, HandlerAction). */
  private JobResult act(Object action, DequeuedJob job) throws InterruptedException {
    if (!(action instanceof Map<?, ?> a)) {
      return JobResult.success();
    }
    if (a.get("attempts") instanceof List<?> steps) {
      return act(steps.get(Math.min(job.attempt(), steps.size()) - 1), job);
    }
    if (a.get("runs") instanceof List<?> steps) {
      int run = job.workflow() == null ? 1 : job.workflow().run();
      return act(steps.get(Math.min(run, steps.size()) - 1), job);
    }
    if (a.get("wait") instanceof String gate) {
      gate(gate).await(); // interrupted when the worker gives the job up
      return act(a.get("do"), job);
    }
    if (a.get("return") instanceof String status) {
      if (!a.containsKey("result_b64") && !a.containsKey("no_events")) {
        return JobResult.success(status);
      }
      byte[] result =
          a.get("result_b64") instanceof String b64 ? Base64.getDecoder().decode(b64) : null;
      return JobResult.success(status, result, Boolean.TRUE.equals(a.get("no_events")));
    }
    if (a.get("raise") instanceof String message) {
      throw new IllegalStateException(message);
    }
    if (a.get("retry_after_ms") instanceof Number ms) {
      throw new RetryAfter(Duration.ofMillis(ms.longValue()), text(a.get("message")));
    }
    if (a.get("do_not_retry") instanceof String message) {
      throw new DoNotRetry(message);
    }
    if (a.get("snooze_ms") instanceof Number ms) {
      return JobResult.snooze(Duration.ofMillis(ms.longValue()), text(a.get("status")));
    }
    return JobResult.success();
  }

  private static Object action(byte[] body) {
    try {
      return Json.parse(new String(body, StandardCharsets.UTF_8));
    } catch (RuntimeException notJson) {
      return null;
    }
  }

  private CountDownLatch gate(String name) {
    synchronized (changed) {
      return gates.computeIfAbsent(name, n -> new CountDownLatch(1));
    }
  }

  private Running worker(String actor) {
    synchronized (changed) {
      Running w = running.get(actor);
      if (w == null) {
        throw new IllegalStateException(actor + " runs no worker");
      }
      return w;
    }
  }

  /** Closes the worker on a thread of its own (close() blocks until it has stopped). */
  private void stop(Running w) {
    synchronized (changed) {
      if (w.stopper != null) {
        return;
      }
      w.stopper =
          new Thread(
              () -> {
                w.worker.close();
                synchronized (changed) {
                  w.stopped = true;
                  changed.notifyAll();
                }
              },
              "stop-worker");
      w.stopper.start();
    }
  }

  private interface Condition {
    boolean holds();
  }

  /** Waits (at most 20 s) until the condition holds. */
  private void await(Condition c) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AWAIT_MS);
    synchronized (changed) {
      while (!c.holds()) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (left <= 0) {
          return;
        }
        changed.wait(left);
      }
    }
  }

  /** Stops every worker at once (gates opened first, so blocked handlers end), forgets all. */
  void reset() throws InterruptedException {
    List<Running> all;
    synchronized (changed) {
      gates.values().forEach(CountDownLatch::countDown);
      all = new ArrayList<>(running.values());
    }
    for (Running w : all) {
      stop(w);
    }
    for (Running w : all) {
      w.stopper.join(60_000);
      w.client.close();
    }
    synchronized (changed) {
      running.clear();
      gates.clear();
    }
  }

  private static int number(Object o) {
    return o == null ? 0 : ((Number) o).intValue();
  }

  private static String text(Object o) {
    return o == null ? "" : (String) o;
  }
}
