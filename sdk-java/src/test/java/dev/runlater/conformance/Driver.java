package dev.runlater.conformance;

import dev.runlater.Ack;
import dev.runlater.Checkpoint;
import dev.runlater.CreateQueueResult;
import dev.runlater.DequeueOptions;
import dev.runlater.DequeueResult;
import dev.runlater.DequeuedJob;
import dev.runlater.Job;
import dev.runlater.JobFilter;
import dev.runlater.JobOutcome;
import dev.runlater.JobPage;
import dev.runlater.JobSpec;
import dev.runlater.JobState;
import dev.runlater.Queue;
import dev.runlater.QueueConfig;
import dev.runlater.QueueRetryPolicy;
import dev.runlater.RetryFailedOptions;
import dev.runlater.RunlaterClient;
import dev.runlater.RunlaterException;
import dev.runlater.ScanOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Conformance driver for the Java SDK: reads one JSON request a line on stdin, runs it through the
 * SDK's public API ({@link RunlaterClient}; the worker layer, ops {@code worker_*}, in {@link
 * WorkerOps}), writes one JSON response a line on stdout. No assertions here: the runner
 * (conformance/runner, TypeScript) does all the matching. The protocol is conformance/protocol.md.
 * The SDK speaks gRPC only.
 */
public final class Driver {
  private String url;
  private String workerUrl;
  // A secure run's token and CA file (connect), given to every client and worker; null: none.
  private String token;
  private Path tlsCa;
  private final Map<String, RunlaterClient> clients = new HashMap<>();
  private final WorkerOps workers = new WorkerOps();

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    Driver driver = new Driver();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) {
        continue;
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> req = (Map<String, Object>) Json.parse(line);
      out.println(Json.write(driver.handle(req)));
      if ("shutdown".equals(req.get("op"))) {
        break;
      }
    }
    driver.closeAll();
    System.exit(0);
  }

  private Map<String, Object> handle(Map<String, Object> r) {
    Map<String, Object> res = new LinkedHashMap<>();
    try {
      res.put("ok", true);
      res.putAll(run(r));
    } catch (RunlaterException e) {
      res.clear();
      res.put("ok", false);
      Map<String, Object> err = new LinkedHashMap<>();
      err.put("code", e.code().name().toLowerCase());
      if (e.reason() != dev.runlater.ErrorReason.UNSPECIFIED) {
        err.put("reason", e.reason().name());
      }
      if (!e.field().isEmpty()) {
        err.put("field", e.field());
      }
      err.put("message", e.getMessage());
      res.put("error", err);
    } catch (RuntimeException | InterruptedException e) {
      res.clear();
      res.put("ok", false);
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      res.put("error", Map.of("code", "driver_error", "message", trace.toString()));
    }
    return res;
  }

  private RunlaterClient client(String actor) {
    return clients.computeIfAbsent(
        actor,
        a -> {
          if (url == null) {
            throw new IllegalStateException("no connect request yet");
          }
          return open(url);
        });
  }

  /** A client for {@code target} with the current connect settings. */
  private RunlaterClient open(String target) {
    RunlaterClient.Builder b = RunlaterClient.builder(target);
    if (token != null) {
      b.token(token);
    }
    if (tlsCa != null) {
      b.tlsCa(tlsCa);
    }
    return b.build();
  }

  private void closeAll() {
    clients.values().forEach(RunlaterClient::close);
    clients.clear();
  }

  private Map<String, Object> run(Map<String, Object> r) throws InterruptedException {
    String op = (String) r.get("op");
    Map<String, Object> out = new LinkedHashMap<>();
    switch (op) {
      case "connect" -> {
        workers.reset();
        closeAll();
        if (!"grpc".equals(r.get("protocol"))) {
          throw new IllegalArgumentException(
              "the Java SDK speaks gRPC only, not " + r.get("protocol"));
        }
        url = (String) r.get("url");
        workerUrl = r.get("worker_url") == null ? url : (String) r.get("worker_url");
        token = (String) r.get("token");
        tlsCa = r.get("tls_ca") == null ? null : Path.of((String) r.get("tls_ca"));
      }
      case "reset" -> workers.reset();
      case "clock" -> workers.clock(((Number) r.get("now_ms")).longValue());
      case "shutdown" -> {
        workers.reset();
        closeAll();
      }
      default -> {
        if (op.startsWith("worker_")) {
          if (workerUrl == null) {
            throw new IllegalStateException("no connect request yet");
          }
          return workers.run(op, (String) r.get("actor"), r, () -> open(workerUrl));
        }
        RunlaterClient c = client((String) r.get("actor"));
        sdk(c, op, r, out);
      }
    }
    return out;
  }

  private static void sdk(
      RunlaterClient c, String op, Map<String, Object> r, Map<String, Object> out)
      throws InterruptedException {
    String queue = (String) r.get("queue");
    switch (op) {
      case "create_queue" -> {
        CreateQueueResult res = c.createQueue(queue, queueConfig(map(r.get("config"))));
        out.put("created", res.created());
        out.put("queue", queueJson(res.queue()));
      }
      case "update_queue" ->
          out.put("queue", queueJson(c.updateQueue(queue, queueConfig(map(r.get("config"))))));
      case "delete_queue" -> out.put("deleted", c.deleteQueue(queue));
      case "get_queue" -> out.put("queue", queueJson(c.getQueue(queue)));
      case "list_queues" ->
          out.put("queues", c.listQueues().stream().map(Driver::queueJson).toList());
      case "enqueue" -> {
        List<JobSpec> specs = new ArrayList<>();
        for (Object o : list(r.get("jobs"))) {
          Map<String, Object> j = map(o);
          specs.add(
              new JobSpec(
                  (String) j.get("queue"),
                  bytes(j.get("body_b64")),
                  integer(j.get("priority"), 0),
                  instant(j.get("run_after_ms")),
                  integer(j.get("attempts_allowed"), 0),
                  (String) j.get("idempotency_key"),
                  (String) j.get("custom_status"),
                  (String) j.get("ordering_key")));
        }
        out.put("job_ids", c.enqueue(specs));
      }
      case "get_jobs" -> {
        List<String> ids = list(r.get("job_ids")).stream().map(String.class::cast).toList();
        out.put(
            "jobs",
            c.getJobs(ids, bool(r.get("include_body"))).stream().map(Driver::jobJson).toList());
      }
      case "scan_jobs" -> {
        JobPage page =
            c.scanJobs(
                filter(r),
                ScanOptions.builder()
                    .pageSize(integer(r.get("limit"), 0))
                    .pageToken((String) r.get("page_token"))
                    .includeBody(bool(r.get("include_body")))
                    .build());
        out.put("jobs", page.jobs().stream().map(Driver::jobJson).toList());
        out.put("next_page_token", page.nextPageToken());
      }
      case "count_jobs" -> out.put("count", c.countJobs(filter(r)));
      case "retry_failed_jobs" ->
          out.put(
              "count",
              c.retryFailedJobs(
                  queue,
                  RetryFailedOptions.builder()
                      .priority(integer(r.get("priority"), 0))
                      .attemptsAllowed(integer(r.get("attempts_allowed"), 0))
                      .runAfter(instant(r.get("run_after_ms")))
                      .limit(integer(r.get("limit"), 0))
                      .build()));
      case "delete_jobs" -> out.put("count", c.deleteJobs(filter(r), integer(r.get("limit"), 0)));
      case "dequeue" -> {
        int limit = integer(r.get("limit"), 1);
        List<Ack> acks = acks(r);
        if (bool(r.get("dry_run"))) {
          if (!acks.isEmpty()) {
            throw new IllegalArgumentException("the Java SDK's peek takes no piggy-backed acks");
          }
          out.put("jobs", c.peek(queue, limit).stream().map(Driver::dequeuedJson).toList());
          out.put("ack_results", List.of());
        } else {
          DequeueResult res =
              c.dequeue(queue, DequeueOptions.builder().limit(limit).acks(acks).build());
          out.put("jobs", res.jobs().stream().map(Driver::dequeuedJson).toList());
          out.put("ack_results", res.ackOutcomes().stream().map(Driver::outcomeJson).toList());
        }
      }
      case "ack" ->
          out.put("results", c.ack(queue, acks(r)).stream().map(Driver::outcomeJson).toList());
      case "checkpoint" -> {
        List<Checkpoint> cps = new ArrayList<>();
        for (Object o : list(r.get("checkpoints"))) {
          Map<String, Object> x = map(o);
          cps.add(
              new Checkpoint(
                  (String) x.get("job_id"),
                  (String) x.get("claim_token"),
                  duration(x.get("extend_claim_by_ms")),
                  x.get("new_body_b64") == null ? null : bytes(x.get("new_body_b64")),
                  bool(x.get("move_to_pending")),
                  instant(x.get("run_after_ms")),
                  integer(x.get("attempts_allowed"), 0),
                  (String) x.get("custom_status")));
        }
        out.put("results", c.checkpoint(queue, cps).stream().map(Driver::outcomeJson).toList());
      }
      default -> {
        if (!WorkflowOps.run(c.workflows(), op, r, out)) {
          throw new IllegalArgumentException("unknown op " + op);
        }
      }
    }
  }

  // ------------------------------------------------------------ requests

  private static List<Ack> acks(Map<String, Object> r) {
    List<Ack> acks = new ArrayList<>();
    for (Object o : list(r.get("succeeded"))) {
      Map<String, Object> s = map(o);
      acks.add(
          new Ack(
              (String) s.get("job_id"),
              (String) s.get("claim_token"),
              true,
              (String) s.get("custom_status"),
              null,
              false));
    }
    for (Object o : list(r.get("failed"))) {
      Map<String, Object> f = map(o);
      acks.add(
          new Ack(
              (String) f.get("job_id"),
              (String) f.get("claim_token"),
              false,
              (String) f.get("custom_status"),
              duration(f.get("retry_delay_ms")),
              bool(f.get("no_retry"))));
    }
    return acks;
  }

  private static JobFilter filter(Map<String, Object> r) {
    Object state = r.get("state");
    Object future = r.get("future");
    return new JobFilter(
        (String) r.get("queue"),
        state == null ? null : JobState.valueOf((String) state),
        integer(r.get("priority"), 0),
        future == null ? null : (Boolean) future,
        (String) r.get("body_regex"));
  }

  private static QueueConfig queueConfig(Map<String, Object> c) {
    QueueRetryPolicy rp = null;
    if (c.get("retry_policy") != null) {
      Map<String, Object> p = map(c.get("retry_policy"));
      rp =
          new QueueRetryPolicy(
              duration(p.get("initial_delay_ms")),
              integer(p.get("linear_steps"), 0),
              duration(p.get("max_delay_ms")));
    }
    Object rate = c.get("max_dequeue_per_second");
    return new QueueConfig(
        boxed(c.get("priorities")),
        duration(c.get("claim_timeout_ms")),
        rp,
        boxed(c.get("default_attempts_allowed")),
        rate == null ? null : ((Number) rate).doubleValue(),
        (Boolean) c.get("paused"),
        duration(c.get("succeeded_retention_ms")),
        duration(c.get("failed_retention_ms")),
        (Boolean) c.get("fifo"),
        boxed(c.get("partitions")),
        boxed(c.get("max_body_bytes")));
  }

  // ------------------------------------------------------------- results

  private static Map<String, Object> queueJson(Queue q) {
    QueueConfig c = q.config();
    QueueRetryPolicy rp = c.retryPolicy();
    Map<String, Object> retry = new LinkedHashMap<>();
    retry.put("initial_delay_ms", rp == null ? 0 : ms(rp.initialDelay()));
    retry.put("linear_steps", rp == null ? 0 : rp.linearSteps());
    retry.put("max_delay_ms", rp == null ? 0 : ms(rp.maxDelay()));
    Map<String, Object> config = new LinkedHashMap<>();
    config.put("priorities", c.priorities());
    config.put("claim_timeout_ms", ms(c.claimTimeout()));
    config.put("retry_policy", retry);
    config.put("default_attempts_allowed", c.defaultAttemptsAllowed());
    config.put("max_dequeue_per_second", c.maxDequeuePerSecond());
    config.put("paused", c.paused());
    config.put("succeeded_retention_ms", ms(c.succeededRetention()));
    config.put("failed_retention_ms", ms(c.failedRetention()));
    config.put("fifo", c.fifo());
    config.put("partitions", c.partitions());
    config.put("max_body_bytes", c.maxBodyBytes());
    Map<String, Object> stats = new LinkedHashMap<>();
    stats.put("pending", q.stats().pending());
    stats.put("scheduled", q.stats().scheduled());
    stats.put("running", q.stats().running());
    stats.put("succeeded", q.stats().succeeded());
    stats.put("failed", q.stats().failed());
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", q.name());
    m.put("config", config);
    m.put("stats", stats);
    return m;
  }

  private static Map<String, Object> jobJson(Job j) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("job_id", j.jobId());
    m.put("queue", j.queue());
    m.put("state", j.state() == null ? null : j.state().name());
    m.put("priority", j.priority());
    m.put("body_b64", Base64.getEncoder().encodeToString(j.body()));
    m.put("run_after_ms", ms(j.runAfter()));
    m.put("attempts_allowed", j.attemptsAllowed());
    m.put("attempts_remaining", j.attemptsRemaining());
    m.put("custom_status", j.customStatus());
    m.put("created_at_ms", ms(j.createdAt()));
    m.put("updated_at_ms", ms(j.updatedAt()));
    m.put("claim_expires_at_ms", ms(j.claimExpiresAt()));
    m.put("finished_at_ms", ms(j.finishedAt()));
    m.put("ordering_key", j.orderingKey());
    return m;
  }

  private static Map<String, Object> dequeuedJson(DequeuedJob j) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("job_id", j.jobId());
    m.put("body_b64", Base64.getEncoder().encodeToString(j.body()));
    m.put("priority", j.priority());
    m.put("attempt", j.attempt());
    m.put("attempts_allowed", j.attemptsAllowed());
    m.put("claim_token", j.claimToken());
    m.put("claim_expires_at_ms", ms(j.claimExpiresAt()));
    m.put("created_at_ms", ms(j.createdAt()));
    m.put("custom_status", j.customStatus());
    return m;
  }

  private static Map<String, Object> outcomeJson(JobOutcome o) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("job_id", o.jobId());
    m.put("outcome", o.outcome().name());
    return m;
  }

  // -------------------------------------------------------------- values

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return o == null ? Map.of() : (Map<String, Object>) o;
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object o) {
    return o == null ? List.of() : (List<Object>) o;
  }

  private static boolean bool(Object o) {
    return o != null && (Boolean) o;
  }

  private static int integer(Object o, int dflt) {
    return o == null ? dflt : ((Number) o).intValue();
  }

  private static Integer boxed(Object o) {
    return o == null ? null : ((Number) o).intValue();
  }

  private static byte[] bytes(Object b64) {
    return b64 == null ? new byte[0] : Base64.getDecoder().decode((String) b64);
  }

  private static Instant instant(Object msSinceEpoch) {
    return msSinceEpoch == null ? null : Instant.ofEpochMilli(((Number) msSinceEpoch).longValue());
  }

  private static Duration duration(Object millis) {
    return millis == null ? null : Duration.ofMillis(((Number) millis).longValue());
  }

  private static Long ms(Instant t) {
    return t == null ? null : t.toEpochMilli();
  }

  private static long ms(Duration d) {
    return d == null ? 0 : d.toMillis();
  }
}
