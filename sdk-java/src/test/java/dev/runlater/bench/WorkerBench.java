package dev.runlater.bench;

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
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * No-op handler throughput of the Java worker, poll against stream: starts {@code scripts/runlater
 * serve --store memory --port 0} (or uses {@code RUNLATER_TARGET}), and for each round and mode
 * enqueues a backlog, runs a worker until every job is SUCCEEDED on the server, and prints jobs/s.
 * Rounds alternate the modes, so a machine that gets busier does not favour one. Not a test: run it
 * with {@code sdk-java/bench.sh [--jobs N] [--concurrency C] [--rounds R]}.
 */
public final class WorkerBench {
  private WorkerBench() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> opts =
        new HashMap<>(Map.of("jobs", "20000", "concurrency", "4", "rounds", "3"));
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    int jobs = Integer.parseInt(opts.get("jobs"));
    int concurrency = Integer.parseInt(opts.get("concurrency"));
    int rounds = Integer.parseInt(opts.get("rounds"));

    String env = System.getenv("RUNLATER_TARGET");
    Process server = env == null || env.isBlank() ? startServer() : null;
    String target = server == null ? env : serverTarget;
    System.out.printf(
        "server %s, %d jobs per run, concurrency %d, default batch size and ack linger%n",
        target, jobs, concurrency);
    Map<DequeueMode, List<Double>> rates = new HashMap<>();
    try (RunlaterClient client = RunlaterClient.builder(target).build()) {
      run(client, DequeueMode.POLL, 5000, concurrency); // warm up the JIT and the connection
      run(client, DequeueMode.STREAM, 5000, concurrency);
      for (int r = 1; r <= rounds; r++) {
        for (DequeueMode mode : DequeueMode.values()) {
          double rate = run(client, mode, jobs, concurrency);
          rates.computeIfAbsent(mode, m -> new ArrayList<>()).add(rate);
          System.out.printf("round %d  %-6s %8.0f jobs/s%n", r, mode, rate);
        }
      }
    } finally {
      if (server != null) {
        server.destroy();
        server.waitFor(10, TimeUnit.SECONDS);
      }
    }
    for (DequeueMode mode : DequeueMode.values()) {
      double[] sorted =
          rates.get(mode).stream().mapToDouble(Double::doubleValue).sorted().toArray();
      System.out.printf(
          "median %-6s %8.0f jobs/s  (runs: %s)%n",
          mode, sorted[sorted.length / 2], Arrays.toString(round(sorted)));
    }
  }

  /** Runs one backlog of {@code jobs} no-op jobs to SUCCEEDED; returns jobs per second. */
  private static double run(RunlaterClient client, DequeueMode mode, int jobs, int concurrency)
      throws InterruptedException {
    String q = "bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    client.createQueue(q, QueueConfig.defaults());
    for (int i = 0; i < jobs; i += 1000) {
      List<JobSpec> batch = new ArrayList<>();
      for (int j = i; j < Math.min(jobs, i + 1000); j++) {
        batch.add(JobSpec.of(q, "job-" + j));
      }
      client.enqueue(batch);
    }
    CountDownLatch handled = new CountDownLatch(jobs);
    long t0;
    long t1;
    try (Worker w = Worker.builder(client).dequeueMode(mode).concurrency(concurrency).build()) {
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
    return jobs / (Duration.ofNanos(t1 - t0).toNanos() / 1e9);
  }

  private static long[] round(double[] xs) {
    return Arrays.stream(xs).mapToLong(Math::round).toArray();
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
    Pattern listening = Pattern.compile("runlater listening on http://([^\\s]+)");
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
