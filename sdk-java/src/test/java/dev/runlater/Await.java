package dev.runlater;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Polls a condition until it holds or a deadline passes (no long fixed sleeps in tests). */
public final class Await {
  private Await() {}

  /** Waits until {@code condition} is true, failing after {@code timeout}. */
  public static void until(Duration timeout, String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted waiting for " + what);
      }
    }
  }

  /** Waits until {@code value} returns non-null and returns it. */
  public static <T> T value(Duration timeout, String what, Supplier<T> value) {
    Object[] box = new Object[1];
    until(timeout, what, () -> (box[0] = value.get()) != null);
    @SuppressWarnings("unchecked")
    T t = (T) box[0];
    return t;
  }
}
