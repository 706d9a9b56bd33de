package dev.runlater;

import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.HashMap;
import java.util.Map;

/**
 * The producer's side of trace context (docs/tracing.md): the W3C traceparent of the active
 * OpenTelemetry span, stored with each job enqueued inside it. The W3C propagator is used directly,
 * not the global one: the field is W3C by contract, whatever propagator the application set for its
 * own calls. Without an OpenTelemetry SDK no span is ever active.
 */
final class TraceContext {
  private TraceContext() {}

  /** The active span's traceparent, or "" when there is none. */
  static String activeTraceparent() {
    Map<String, String> carrier = new HashMap<>(2);
    W3CTraceContextPropagator.getInstance().inject(Context.current(), carrier, Map::put);
    return carrier.getOrDefault("traceparent", "");
  }
}
