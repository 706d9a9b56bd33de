package dev.runlater;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Throwaway certificates made once per test JVM by {@code <repo>/scripts/test-certs.sh} (the same
 * chain the other SDKs' tests use): {@code ca.pem}, {@code server.pem} / {@code server-key.pem} for
 * 127.0.0.1, ::1 and localhost, and {@code client.pem} / {@code client-key.pem}.
 */
public final class TestCerts {
  private static Path dir;

  private TestCerts() {}

  /** The directory holding them, made on first use under {@code target/}. */
  public static synchronized Path dir() {
    if (dir == null) {
      // Maven runs from <repo>/sdk-java.
      Path sdk = Path.of("").toAbsolutePath();
      Path made = sdk.resolve("target/test-certs");
      Path script = sdk.getParent().resolve("scripts/test-certs.sh");
      try {
        Process p =
            new ProcessBuilder("bash", script.toString(), made.toString()).inheritIO().start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
          throw new IllegalStateException(script + " failed");
        }
      } catch (Exception e) {
        throw new IllegalStateException("could not make the test certificates", e);
      }
      dir = made;
    }
    return dir;
  }

  /** One of the files, e.g. {@code file("ca.pem")}. */
  public static Path file(String name) {
    return dir().resolve(name);
  }
}
