"""W3C trace context through runlater (docs/tracing.md), with the OpenTelemetry API only.

An enqueue inside an active span stores that span's traceparent with the job; the worker
runs the handler inside a ``process <queue>`` span (kind CONSUMER, OpenTelemetry's
messaging conventions) whose parent is that span. Without an OpenTelemetry SDK configured
the API's tracer and context are no-ops: nothing is stored and no span is recorded.

The W3C propagator is used directly, not the global one: the field is W3C by contract,
whatever propagator (B3, Jaeger, none) the application set for its own HTTP calls.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from ._types import DequeuedJob

_W3C = TraceContextTextMapPropagator()
_TRACER = trace.get_tracer("runlater")  # a proxy: it follows the provider set later


def active_traceparent() -> str:
    """The traceparent of the caller's active span, or "" when no span is active."""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier.get("traceparent", "")


@contextmanager
def process_span(job: DequeuedJob) -> Iterator[None]:
    """Runs the block inside the job's process span, a child of the enqueuing span when
    the job carries a traceparent. An exception leaving the block is recorded on the span
    and sets its status to ERROR (the API's default for start_as_current_span)."""
    parent = _W3C.extract({"traceparent": job.traceparent}) if job.traceparent else None
    with _TRACER.start_as_current_span(
        f"process {job.queue}",
        context=parent,
        kind=trace.SpanKind.CONSUMER,
        attributes={
            "messaging.system": "runlater",
            "messaging.operation.name": "process",
            "messaging.operation.type": "process",
            "messaging.destination.name": job.queue,
            "messaging.message.id": job.job_id,
            "runlater.job.attempt": job.attempt,
        },
    ):
        yield
