package dev.runlater.worker;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Capped, jittered exponential backoff for the worker's retry loops, so a fleet of workers does not
 * hammer a server that is coming back up in lockstep (as the TypeScript worker does).
 */
final class Backoff {
  private static final long INITIAL_MS = 100;
  private static final long MAX_MS = 5_000;

  private int failures;

  /** The next delay: 100 ms × 2^failures, capped at 5 s, with ±20 % jitter. */
  Duration next() {
    long base = Math.min(INITIAL_MS << Math.min(failures, 16), MAX_MS);
    failures++;
    return Duration.ofMillis(Math.round(base * ThreadLocalRandom.current().nextDouble(0.8, 1.2)));
  }

  void reset() {
    failures = 0;
  }
}
