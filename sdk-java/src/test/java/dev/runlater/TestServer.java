package dev.runlater;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The runlater server the tests talk to: one real server per test JVM, started on a free port with
 * {@code <repo>/scripts/runlater serve --store memory --port 0 --host 127.0.0.1}, or an existing
 * one named by the environment variable {@code RUNLATER_TARGET} (e.g. {@code 127.0.0.1:8080}).
 */
public final class TestServer {
  private static final Pattern LISTENING =
      Pattern.compile("runlater listening on https?://([^\\s]+)");
  private static String target;

  private TestServer() {}

  /** The server's "host:port", starting it on first use. */
  public static synchronized String target() {
    if (target == null) {
      String env = System.getenv("RUNLATER_TARGET");
      target =
          env != null && !env.isBlank()
              ? env.replaceFirst("^http://", "")
              : start("server", List.of(), Map.of()).address();
    }
    return target;
  }

  /** A client for the test server with a short default deadline. */
  public static RunlaterClient client() {
    return RunlaterClient.builder(target())
        .defaultDeadline(java.time.Duration.ofSeconds(10))
        .build();
  }

  /** A client for the test server whose calls all go through {@code interceptor}. */
  public static RunlaterClient client(io.grpc.ClientInterceptor interceptor) {
    return RunlaterClient.builder(target())
        .defaultDeadline(java.time.Duration.ofSeconds(10))
        .intercept(interceptor)
        .build();
  }

  /** A fresh queue name, so tests never share state. */
  public static String queueName(String prefix) {
    return prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  /** A server a test started with flags of its own (auth, TLS); close it when done. */
  public record Started(String address, Process process) implements AutoCloseable {
    /** Stops the server. */
    @Override
    public void close() {
      stop(process);
    }
  }

  /**
   * Starts a server of its own on a free loopback port with {@code flags} added to {@code serve},
   * and {@code env} added to the environment; its stderr goes to {@code
   * target/runlater-<name>.log}.
   */
  public static Started start(String name, List<String> flags, Map<String, String> env) {
    // The SDK lives at <repo>/sdk-java and Maven runs from there.
    Path repo = Path.of("").toAbsolutePath().getParent();
    Path script = repo.resolve("scripts/runlater");
    if (!Files.isExecutable(script)) {
      throw new IllegalStateException("no server script at " + script + "; set RUNLATER_TARGET");
    }
    List<String> command =
        new ArrayList<>(
            List.of(
                script.toString(),
                "serve",
                "--store",
                "memory",
                "--port",
                "0",
                "--host",
                "127.0.0.1"));
    command.addAll(flags);
    String log = "sdk-java/target/runlater-" + name + ".log";
    try {
      ProcessBuilder pb =
          new ProcessBuilder(command)
              .directory(repo.toFile())
              .redirectError(repo.resolve(log).toFile());
      pb.environment().putAll(env);
      Process p = pb.start();
      // A test that fails before closing it must not leave it running.
      Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(p)));
      BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      CompletableFuture<String> address =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  for (String line; (line = out.readLine()) != null; ) {
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                      return m.group(1);
                    }
                  }
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
                throw new IllegalStateException("server exited before listening; see " + log);
              });
      // Generous: the first run may install Node (scripts/node-env.sh).
      return new Started(address.get(180, TimeUnit.SECONDS), p);
    } catch (Exception e) {
      throw new IllegalStateException("could not start the runlater server; see " + log, e);
    }
  }

  private static void stop(Process p) {
    p.destroy(); // SIGTERM: the server drains and exits
    try {
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
    }
  }
}
