"""Trace context end to end (docs/tracing.md): an enqueue inside a span stores its
traceparent, and the worker's ``process <queue>`` span continues that trace, recorded by
the OpenTelemetry SDK's in-memory exporter (a test dependency; the package needs only
the API)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from helpers import QueueFactory, running, wait_for
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from runlater import Client, DequeuedJob, DoNotRetry, JobState, Worker

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def tracer_provider() -> None:
    # The global provider can be set once per process: this module's, for the session.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)


@pytest.fixture(autouse=True)
def exporter() -> Iterator[InMemorySpanExporter]:
    _EXPORTER.clear()
    yield _EXPORTER


def _worker(client: Client) -> Worker:
    return Worker(
        client, poll_wait=timedelta(milliseconds=500), shutdown_grace=timedelta(seconds=5)
    )


def _process_span(exporter: InMemorySpanExporter, queue: str) -> ReadableSpan:
    def find() -> ReadableSpan | None:
        return next(
            (s for s in exporter.get_finished_spans() if s.name == f"process {queue}"), None
        )

    return wait_for(find)


def _job_state(client: Client, job_id: str, state: JobState) -> bool:
    job = client.get_job(job_id)
    return job is not None and job.state == state


def test_enqueue_in_a_span_stores_its_traceparent_and_the_handler_span_is_its_child(
    client: Client, make_queue: QueueFactory, exporter: InMemorySpanExporter
) -> None:
    q = make_queue()
    with trace.get_tracer("test").start_as_current_span("producer") as producer:
        job_id = client.enqueue(q, b"hi")
    sent = producer.get_span_context()
    stored = client.get_job(job_id)
    assert stored is not None
    assert (
        stored.traceparent == f"00-{sent.trace_id:032x}-{sent.span_id:016x}-{sent.trace_flags:02x}"
    )

    app = _worker(client)
    seen_trace_ids: list[int] = []

    @app.handler(q)
    def handle(job: DequeuedJob) -> None:  # a plain handler: on a handler thread
        assert job.traceparent == stored.traceparent
        seen_trace_ids.append(trace.get_current_span().get_span_context().trace_id)

    with running(app):
        span = _process_span(exporter, q)
    assert span.context is not None and span.parent is not None
    assert span.context.trace_id == sent.trace_id
    assert (span.parent.span_id, span.parent.is_remote) == (sent.span_id, True)
    assert seen_trace_ids == [sent.trace_id]
    assert span.kind == SpanKind.CONSUMER
    assert dict(span.attributes or {}) == {
        "messaging.system": "runlater",
        "messaging.operation.name": "process",
        "messaging.operation.type": "process",
        "messaging.destination.name": q,
        "messaging.message.id": job_id,
        "runlater.job.attempt": 1,
    }
    assert span.status.status_code == StatusCode.UNSET


def test_no_active_span_stores_no_traceparent_and_the_handler_span_is_a_root(
    client: Client, make_queue: QueueFactory, exporter: InMemorySpanExporter
) -> None:
    q = make_queue()
    job_id = client.enqueue(q, b"hi")
    stored = client.get_job(job_id)
    assert stored is not None and stored.traceparent == ""
    app = _worker(client)

    @app.handler(q)
    async def handle(job: DequeuedJob) -> None:
        pass

    with running(app):
        span = _process_span(exporter, q)
    assert span.parent is None


def test_an_explicit_traceparent_wins_over_the_active_span(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    given = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with trace.get_tracer("test").start_as_current_span("producer"):
        job_id = client.enqueue(q, b"hi", traceparent=given)
        none_id = client.enqueue(q, b"hi", traceparent="")
    assert [j.traceparent for j in client.get_jobs([job_id, none_id]).jobs] == [given, ""]


def test_a_failing_handler_records_the_exception_and_an_error_status(
    client: Client, make_queue: QueueFactory, exporter: InMemorySpanExporter
) -> None:
    q = make_queue()
    with trace.get_tracer("test").start_as_current_span("producer"):
        job_id = client.enqueue(q, b"hi")
    app = _worker(client)

    @app.handler(q)
    async def handle(job: DequeuedJob) -> None:  # an async handler: a task on the loop
        raise DoNotRetry("card declined")

    with running(app):
        span = _process_span(exporter, q)
        wait_for(lambda: _job_state(client, job_id, JobState.FAILED))
    assert span.status.status_code == StatusCode.ERROR
    assert [(e.name, (e.attributes or {}).get("exception.message")) for e in span.events] == [
        ("exception", "card declined")
    ]
