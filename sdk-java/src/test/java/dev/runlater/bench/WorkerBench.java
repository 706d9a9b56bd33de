package dev.runlater.bench;

import dev.runlater.Job;
import dev.runlater.JobFilter;
import dev.runlater.JobSpec;
import dev.runlater.JobState;
import dev.runlater.QueueConfig;
import dev.runlater.RunlaterClient;
import dev.runlater.worker.DequeueMode;
import dev.runlater.worker.JobResult;
import dev.runlater.worker.Worker;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * No-op handler throughput of one Java worker, at its defaults unless told otherwise: per run it
 * enqueues a backlog into a fresh queue, starts {@code Worker.builder(client).build()} (plus the
 * options given), and times it from start until the server counts every job SUCCEEDED. Prints one
 * JSON line per run. Not a test: run it with {@code sdk-java/bench.sh [--url URL] [--jobs N]
 * [--runs R] [--warmup W] [--concurrency C] [--mode stream|poll] [--ack-delay-ms D] [--latency N]};
 * {@code --latency N} instead sends N jobs one at a time to an idle worker and prints the median of
 * finished_at - created_at (both the server's times). Without {@code --url} it starts {@code
 * scripts/runlater serve --store memory}. test/bench/workers.ts (npm run bench:workers) runs it
 * next to the TypeScript and Python benches.
 */
public final class WorkerBench {
  private WorkerBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new HashMap<>(Map.of("jobs", "20000", "runs", "3", "warmup", "0"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    int jobs = Integer.parseInt(opts.get("jobs"));
    String url = opts.get("url");
    Process server = url == null ? startServer() : null;
    String target = server == null ? url : serverTarget;
    try (RunlaterClient client = RunlaterClient.builder(target).build()) {
      int warmup = Integer.parseInt(opts.get("warmup"));
      if (warmup > 0) {
        run(client, opts, warmup); // the JIT and the connection
      }
      if (opts.containsKey("latency")) {
        int n = Integer.parseInt(opts.get("latency"));
        System.out.printf(
            Locale.ROOT,
            "{\"sdk\":\"java\",\"jobs\":%d,\"latency_ms\":%d}%n",
            n,
            latency(client, opts, n));
        return;
      }
      for (int r = 0; r < Integer.parseInt(opts.get("runs")); r++) {
        double seconds = run(client, opts, jobs);
        System.out.printf(
            Locale.ROOT,
            "{\"sdk\":\"java\",\"jobs\":%d,\"seconds\":%.6f,\"jobs_per_s\":%d}%n",
            jobs,
            seconds,
            Math.round(jobs / seconds));
      }
    } finally {
      if (server != null) {
        server.destroy();
        server.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  private static Worker.Builder builder(RunlaterClient client, Map<String, String> opts) {
    Worker.Builder builder = Worker.builder(client);
    if (opts.containsKey("concurrency")) {
      builder.concurrency(Integer.parseInt(opts.get("concurrency")));
    }
    if (opts.containsKey("mode")) {
      builder.dequeueMode(DequeueMode.valueOf(opts.get("mode").toUpperCase(Locale.ROOT)));
    }
    if (opts.containsKey("ack-delay-ms")) {
      builder.ackDelay(Duration.ofMillis(Long.parseLong(opts.get("ack-delay-ms"))));
    }
    return builder;
  }

  /** Median milliseconds from enqueue to outcome applied of {@code n} lone jobs. */
  private static long latency(RunlaterClient client, Map<String, String> opts, int n)
      throws InterruptedException {
    String q = "bench_java_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    client.createQueue(q, QueueConfig.defaults());
    Semaphore handled = new Semaphore(0);
    List<String> ids = new ArrayList<>();
    try (Worker w = builder(client, opts).build()) {
      w.register(
          q,
          job -> {
            handled.release();
            return JobResult.success();
          });
      w.start();
      for (int i = 0; i < n; i++) {
        ids.add(client.enqueue(JobSpec.of(q, "x")));
        handled.acquire();
        Thread.sleep(60); // its outcome on its own, not with the next
      }
    }
    List<Long> ms = new ArrayList<>();
    for (Job j : client.getJobs(ids, false)) {
      ms.add(Duration.between(j.createdAt(), j.finishedAt()).toMillis());
    }
    client.deleteQueue(q);
    ms.sort(null);
    return ms.get(ms.size() / 2);
  }

  /** Runs one backlog of {@code jobs} no-op jobs to SUCCEEDED; returns the seconds it took. */
  private static double run(RunlaterClient client, Map<String, String> opts, int jobs)
      throws InterruptedException {
    String q = "bench_java_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    client.createQueue(q, QueueConfig.defaults());
    for (int i = 0; i < jobs; i += 1000) {
      List<JobSpec> batch = new ArrayList<>();
      for (int j = i; j < Math.min(jobs, i + 1000); j++) {
        batch.add(JobSpec.of(q, "x"));
      }
      client.enqueue(batch);
    }
    Worker.Builder builder = builder(client, opts);
    CountDownLatch handled = new CountDownLatch(jobs);
    long t0;
    long t1;
    try (Worker w = builder.build()) {
      w.register(
          q,
          job -> {
            handled.countDown();
            return JobResult.success();
          });
      t0 = System.nanoTime();
      w.start();
      handled.await();
      // Done when the server has every ack applied, not when the last handler returned.
      JobFilter succeeded = JobFilter.queue(q).withState(JobState.SUCCEEDED);
      while (client.countJobs(succeeded) < jobs) {
        Thread.sleep(5);
      }
      t1 = System.nanoTime();
    }
    client.deleteQueue(q);
    return Duration.ofNanos(t1 - t0).toNanos() / 1e9;
  }

  private static String serverTarget;

  private static Process startServer() throws Exception {
    Path repo = Path.of("").toAbsolutePath().getParent(); // run from sdk-java
    Process p =
        new ProcessBuilder(
                repo.resolve("scripts/runlater").toString(),
                "serve",
                "--store",
                "memory",
                "--port",
                "0",
                "--host",
                "127.0.0.1")
            .directory(repo.toFile())
            .redirectError(repo.resolve("sdk-java/target/bench-server.log").toFile())
            .start();
    Runtime.getRuntime().addShutdownHook(new Thread(p::destroy));
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    Pattern listening = Pattern.compile("runlater listening on (http://[^\\s]+)");
    for (String line; (line = out.readLine()) != null; ) {
      Matcher m = listening.matcher(line);
      if (m.find()) {
        serverTarget = m.group(1);
        return p;
      }
    }
    throw new IllegalStateException("the server exited; see target/bench-server.log");
  }
}
