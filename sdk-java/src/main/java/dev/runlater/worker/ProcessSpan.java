package dev.runlater.worker;

import dev.runlater.DequeuedJob;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;

/**
 * The worker's side of trace context (docs/tracing.md): a handler runs inside a {@code process
 * <queue>} span (kind CONSUMER, OpenTelemetry's messaging conventions) whose parent is the span
 * that enqueued the job, read from its W3C traceparent. A handler that throws leaves the exception
 * recorded on the span and its status ERROR. The tracer comes from {@link GlobalOpenTelemetry}: a
 * no-op until the application registers an SDK.
 */
final class ProcessSpan {
  private static final String TRACER = "dev.runlater";

  private ProcessSpan() {}

  /** A carrier of one header: the job's traceparent. */
  private static final TextMapGetter<String> TRACEPARENT =
      new TextMapGetter<>() {
        @Override
        public String get(String traceparent, String key) {
          return "traceparent".equals(key) ? traceparent : null;
        }
      };

  static JobResult run(String queue, DequeuedJob job, JobHandler handler) throws Exception {
    Context parent =
        job.traceparent().isEmpty()
            ? Context.current()
            : W3CTraceContextPropagator.getInstance()
                .extract(Context.current(), job.traceparent(), TRACEPARENT);
    Span span =
        GlobalOpenTelemetry.getTracer(TRACER)
            .spanBuilder("process " + queue)
            .setParent(parent)
            .setSpanKind(SpanKind.CONSUMER)
            .setAttribute("messaging.system", "runlater")
            .setAttribute("messaging.operation.name", "process")
            .setAttribute("messaging.operation.type", "process")
            .setAttribute("messaging.destination.name", queue)
            .setAttribute("messaging.message.id", job.jobId())
            .setAttribute("runlater.job.attempt", (long) job.attempt())
            .startSpan();
    // Not try-with-resources: the scope must close before the span ends, after the catch.
    Scope scope = span.makeCurrent();
    try {
      return handler.handle(job);
    } catch (Throwable t) {
      span.recordException(t);
      span.setStatus(
          StatusCode.ERROR, t.getMessage() == null ? t.getClass().getName() : t.getMessage());
      throw t;
    } finally {
      scope.close();
      span.end();
    }
  }
}
