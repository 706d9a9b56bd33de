package dev.runlater.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RetryPolicyTest {
  private static List<Long> seconds(RetryPolicy p, int attempts) {
    List<Long> out = new ArrayList<>();
    for (int n = 1; n <= attempts; n++) {
      out.add(p.delayAfter(n).toSeconds());
    }
    return out;
  }

  @Test
  void pinLaterDefaultMatchesTheProtoComment() {
    assertEquals(
        List.of(5L, 10L, 15L, 20L, 25L, 50L, 100L, 200L, 400L, 800L),
        seconds(RetryPolicy.pinLaterDefault(), 10));
    assertEquals(Duration.ofHours(1), RetryPolicy.pinLaterDefault().delayAfter(20));
    assertEquals(Duration.ofHours(1), RetryPolicy.pinLaterDefault().delayAfter(1000));
  }

  @Test
  void constantLinearAndExponential() {
    assertEquals(List.of(7L, 7L, 7L), seconds(RetryPolicy.constant(Duration.ofSeconds(7)), 3));
    assertEquals(
        List.of(2L, 4L, 6L, 7L),
        seconds(RetryPolicy.linear(Duration.ofSeconds(2), Duration.ofSeconds(7)), 4));
    assertEquals(
        List.of(1L, 2L, 4L, 8L, 10L),
        seconds(RetryPolicy.exponential(Duration.ofSeconds(1), Duration.ofSeconds(10)), 5));
    assertEquals(
        Duration.ofSeconds(10),
        RetryPolicy.exponential(Duration.ofSeconds(1), Duration.ofSeconds(10)).delayAfter(500));
  }

  @Test
  void linearThenExponential() {
    assertEquals(
        List.of(1L, 2L, 4L, 8L, 16L),
        seconds(
            RetryPolicy.linearThenExponential(Duration.ofSeconds(1), 2, Duration.ofHours(1)), 5));
  }
}
