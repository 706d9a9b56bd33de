package dev.runlater.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.Await;
import dev.runlater.JobSpec;
import dev.runlater.JobState;
import dev.runlater.QueueConfig;
import dev.runlater.ServerTest;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trace context end to end (docs/tracing.md): an enqueue inside a span stores its traceparent, and
 * the worker's {@code process <queue>} span continues that trace, recorded by the OpenTelemetry
 * SDK's in-memory exporter (a test dependency; the SDK needs only the API).
 */
class TracingTest extends ServerTest {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final InMemorySpanExporter EXPORTER = InMemorySpanExporter.create();

  @BeforeAll
  static void registerSdk() {
    GlobalOpenTelemetry.resetForTest();
    GlobalOpenTelemetry.set(
        OpenTelemetrySdk.builder()
            .setTracerProvider(
                SdkTracerProvider.builder()
                    .addSpanProcessor(SimpleSpanProcessor.create(EXPORTER))
                    .build())
            .build());
  }

  @AfterAll
  static void unregisterSdk() {
    GlobalOpenTelemetry.resetForTest();
  }

  /**
   * Runs {@code enqueue} inside a fresh producer span; returns its result and the span's context.
   */
  private static <T> T inSpan(AtomicReference<SpanContext> producer, Supplier<T> enqueue) {
    Span span = GlobalOpenTelemetry.getTracer("test").spanBuilder("producer").startSpan();
    producer.set(span.getSpanContext());
    Scope scope = span.makeCurrent();
    try {
      return enqueue.get();
    } finally {
      scope.close();
      span.end();
    }
  }

  /** Runs one job of `queue` with `handler` and returns its finished process span. */
  private static SpanData process(String queue, JobHandler handler) {
    try (Worker worker =
        Worker.builder(client)
            .pollWait(Duration.ofSeconds(1))
            .shutdownGrace(Duration.ofSeconds(5))
            .build()
            .register(queue, handler)) {
      worker.start();
      return Await.value(
          WAIT,
          "the process span of " + queue,
          () ->
              EXPORTER.getFinishedSpanItems().stream()
                  .filter(s -> s.getName().equals("process " + queue))
                  .findFirst()
                  .orElse(null));
    }
  }

  private static String queue() {
    return newQueue("traced", QueueConfig.builder().defaultAttemptsAllowed(1).build());
  }

  @Test
  void enqueueInASpanStoresItsTraceparentAndTheHandlerSpanIsItsChild() {
    String q = queue();
    AtomicReference<SpanContext> producer = new AtomicReference<>();
    String id = inSpan(producer, () -> client.enqueue(JobSpec.of(q, "hi")));
    SpanContext sent = producer.get();
    String expected =
        "00-" + sent.getTraceId() + "-" + sent.getSpanId() + "-" + sent.getTraceFlags().asHex();
    assertEquals(expected, client.getJob(id, false).orElseThrow().traceparent());

    AtomicReference<String> handlerTraceId = new AtomicReference<>();
    SpanData span =
        process(
            q,
            job -> {
              handlerTraceId.set(Span.current().getSpanContext().getTraceId());
              return JobResult.success();
            });
    assertEquals(sent.getTraceId(), span.getTraceId());
    assertEquals(sent.getSpanId(), span.getParentSpanId());
    assertTrue(span.getParentSpanContext().isRemote());
    assertEquals(sent.getTraceId(), handlerTraceId.get());
    assertEquals(SpanKind.CONSUMER, span.getKind());
    assertEquals("runlater", span.getAttributes().get(AttributeKey.stringKey("messaging.system")));
    assertEquals(q, span.getAttributes().get(AttributeKey.stringKey("messaging.destination.name")));
    assertEquals(id, span.getAttributes().get(AttributeKey.stringKey("messaging.message.id")));
    assertEquals(1L, span.getAttributes().get(AttributeKey.longKey("runlater.job.attempt")));
    assertEquals(StatusCode.UNSET, span.getStatus().getStatusCode());
  }

  @Test
  void noActiveSpanStoresNoTraceparentAndTheHandlerSpanIsARoot() {
    String q = queue();
    String id = client.enqueue(JobSpec.of(q, "hi"));
    assertEquals("", client.getJob(id, false).orElseThrow().traceparent());
    SpanData span = process(q, job -> JobResult.success());
    assertFalse(span.getParentSpanContext().isValid());
  }

  @Test
  void anExplicitTraceparentWinsOverTheActiveSpan() {
    String q = queue();
    String given = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    AtomicReference<SpanContext> producer = new AtomicReference<>();
    List<String> ids =
        inSpan(
            producer,
            () ->
                client.enqueue(
                    List.of(
                        JobSpec.of(q, "a").withTraceparent(given),
                        JobSpec.of(q, "b").withTraceparent(""))));
    assertEquals(given, client.getJob(ids.get(0), false).orElseThrow().traceparent());
    assertEquals("", client.getJob(ids.get(1), false).orElseThrow().traceparent());
  }

  @Test
  void aFailingHandlerRecordsTheExceptionAndAnErrorStatus() {
    String q = queue();
    String id = inSpan(new AtomicReference<>(), () -> client.enqueue(JobSpec.of(q, "hi")));
    SpanData span =
        process(
            q,
            job -> {
              throw new DoNotRetry("card declined");
            });
    assertEquals(StatusCode.ERROR, span.getStatus().getStatusCode());
    assertEquals("card declined", span.getStatus().getDescription());
    assertEquals(List.of("exception"), span.getEvents().stream().map(e -> e.getName()).toList());
    Await.value(
        WAIT,
        "job " + id + " to fail",
        () -> client.getJob(id, false).orElseThrow().state() == JobState.FAILED ? true : null);
  }
}
