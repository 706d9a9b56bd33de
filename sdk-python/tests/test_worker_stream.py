"""Stream mode only: the Worker over one DequeueStream per queue (HTTP/2).

The behaviour both modes share (outcomes, retries, claims, shutdown) is in test_worker.py,
run in each mode.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from helpers import QueueFactory, running, wait_for

from runlater import (
    AsyncClient,
    Client,
    DequeuedJob,
    DequeueResult,
    Job,
    JobOutcome,
    JobSpec,
    JobState,
    UnavailableError,
    Worker,
)
from runlater._gen.v1 import worker_service_pb2 as pb


class _StreamSpy(AsyncClient):
    """An HTTP/2 AsyncClient that counts the worker's calls and watches its stream messages.

    `granted` adds up the credits sent, `finished` is kept by the test's handler: their
    difference is the jobs the worker holds or may still receive. Touched only on the
    worker's event loop; the test thread reads it.
    """

    def __init__(self, url: str, **kw: Any) -> None:
        super().__init__(url, http_version="2", **kw)
        self.calls: Counter[str] = Counter()
        self.requests: list[pb.DequeueStreamRequest] = []
        self.granted = 0
        self.finished = 0
        self.max_held = 0

    async def dequeue(self, queue: str, **kw: Any) -> DequeueResult:
        self.calls["dequeue"] += 1
        return await super().dequeue(queue, **kw)

    async def ack(self, queue: str, **kw: Any) -> list[JobOutcome]:
        self.calls["ack"] += 1
        return await super().ack(queue, **kw)

    def _dequeue_stream(
        self, requests: AsyncIterator[pb.DequeueStreamRequest]
    ) -> AsyncIterator[pb.DequeueStreamResponse]:
        self.calls["stream"] += 1
        return super()._dequeue_stream(self._watch(requests))

    async def _watch(
        self, requests: AsyncIterator[pb.DequeueStreamRequest]
    ) -> AsyncIterator[pb.DequeueStreamRequest]:
        async for msg in requests:
            self.requests.append(msg)
            self.granted += msg.credit
            self.max_held = max(self.max_held, self.granted - self.finished)
            yield msg


def _succeeded(client: Client, job_id: str) -> Job | None:
    job = client.get_job(job_id)
    return job if job is not None and job.state is JobState.SUCCEEDED else None


def _fast_worker(client: Client | AsyncClient | str, **kw: Any) -> Worker:
    kw.setdefault("shutdown_grace", timedelta(seconds=5))
    return Worker(client, **kw)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_one_stream_carries_every_job_and_ack_without_dequeue_or_ack_calls(
    client: Client, server_url: str, make_queue: QueueFactory, is_async: bool
) -> None:
    q = make_queue()
    spy = _StreamSpy(server_url)
    app = _fast_worker(spy, concurrency=8)  # an HTTP/2 client: stream mode by default
    assert app.dequeue_mode == "stream"
    ran: list[str] = []

    async def handle_async(job: DequeuedJob) -> str:
        ran.append(job.job_id)
        await asyncio.sleep(0.001)
        return "streamed"

    def handle_sync(job: DequeuedJob) -> str:
        ran.append(job.job_id)
        return "streamed"

    app.register(q, handle_async if is_async else handle_sync)
    ids = client.enqueue_many([JobSpec(q, b"%d" % i) for i in range(200)])
    with running(app):
        wait_for(lambda: client.count_jobs(q, state=JobState.SUCCEEDED) == 200)
    assert Counter(ran) == Counter(ids), "every job runs exactly once"
    assert spy.calls == Counter(stream=1), "one stream, no Dequeue or Ack call"
    assert sum(m.HasField("ack") for m in spy.requests) > 1, "acks rode on the stream"
    assert client.count_jobs(q, state=JobState.RUNNING) == 0


def test_credits_granted_plus_jobs_held_never_exceed_the_concurrency(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    q = make_queue()
    spy = _StreamSpy(server_url)
    app = _fast_worker(spy, concurrency=6)

    @app.handler(q)
    async def handle(job: DequeuedJob) -> None:
        await asyncio.sleep(0.01)
        spy.finished += 1  # before the worker frees the slot: never under-counts

    # Jobs trickle in, so credits stay granted and unused while other jobs run: a worker
    # that granted its free slots without counting those would grant too many.
    with running(app):
        for burst in range(12):
            client.enqueue_many([JobSpec(q, b"%d-%d" % (burst, i)) for i in range(5)])
            time.sleep(0.03)
        wait_for(lambda: client.count_jobs(q, state=JobState.SUCCEEDED) == 60)
    assert spy.calls["stream"] == 1
    assert len(spy.requests) > 5, "credits were granted as slots freed, not all at once"
    assert spy.max_held <= 6, f"{spy.max_held} jobs held or granted at once, concurrency 6"


class _SwallowingSpy(AsyncClient):
    """Breaks the first DequeueStream when the worker sends an ack on it: the ack never
    reaches the server, and the stream ends with an error."""

    def __init__(self, url: str) -> None:
        super().__init__(url, http_version="2")
        self.opens = 0
        self.swallowed: list[str] = []

    def _dequeue_stream(
        self, requests: AsyncIterator[pb.DequeueStreamRequest]
    ) -> AsyncIterator[pb.DequeueStreamResponse]:
        self.opens += 1
        if self.opens > 1:
            return super()._dequeue_stream(requests)
        return self._breaks(requests)

    async def _breaks(
        self, requests: AsyncIterator[pb.DequeueStreamRequest]
    ) -> AsyncIterator[pb.DequeueStreamResponse]:
        async def until_an_ack() -> AsyncIterator[pb.DequeueStreamRequest]:
            async for msg in requests:
                if msg.HasField("ack"):
                    self.swallowed.extend(s.job_id for s in msg.ack.succeeded)
                    return  # not sent; our side closes, so the server ends its side
                yield msg

        async for res in super()._dequeue_stream(until_an_ack()):
            yield res
        raise UnavailableError("unavailable", "the test broke the stream")


def test_an_ack_a_broken_stream_swallowed_is_sent_again(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    # A long claim: the job must succeed by the re-sent ack, not by running again.
    q = make_queue(claim_timeout=timedelta(seconds=60))
    spy = _SwallowingSpy(server_url)
    app = _fast_worker(spy, concurrency=1)
    runs: list[int] = []

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        runs.append(job.attempt)
        return "acked twice"

    job_id = client.enqueue(q, b"x")
    with running(app):
        # On the next stream, or by an Ack call if the timer fires before it opens.
        done = wait_for(lambda: _succeeded(client, job_id))
        wait_for(lambda: spy.opens >= 2)  # the broken stream is reopened
    assert spy.swallowed == [job_id]
    assert runs == [1], "the job ran once"
    assert done.attempts_remaining == done.attempts_allowed - 1


@pytest.mark.parametrize(
    ("make_client", "mode"),
    [
        (lambda url: Client(url), "stream"),  # the worker's own connection takes HTTP/2
        (lambda url: url, "stream"),
        (lambda url: Client(url, protocol="grpc"), "stream"),
        (lambda url: AsyncClient(url, http_version="2"), "stream"),
        (lambda url: Client(url, http_version="1.1"), "poll"),  # asked for HTTP/1.1
        (lambda url: AsyncClient(url), "poll"),  # a given AsyncClient is used as it is
        (lambda url: Client(url, protocol="grpc-web"), "poll"),
    ],
)
def test_stream_is_the_default_wherever_the_transport_allows(
    server_url: str, make_client: Any, mode: str
) -> None:
    assert Worker(make_client(server_url)).dequeue_mode == mode


@pytest.mark.parametrize(
    "make_client",
    [
        lambda url: AsyncClient(url),
        lambda url: Client(url, http_version="1.1"),
        lambda url: Client(url, protocol="grpc-web"),
    ],
)
def test_asking_for_stream_where_the_transport_cannot_is_a_clear_error(
    server_url: str, make_client: Any
) -> None:
    with pytest.raises(ValueError, match='needs a client over HTTP/2.*http_version="2"'):
        Worker(make_client(server_url), dequeue_mode="stream")


@pytest.mark.parametrize("protocol", ["connect", "grpc"])
def test_stream_mode_works_over_connect_and_grpc(
    client: Client, server_url: str, make_queue: QueueFactory, protocol: str
) -> None:
    q = make_queue()
    app = _fast_worker(Client(server_url, protocol=protocol), dequeue_mode="stream")  # type: ignore[arg-type]
    done = threading.Event()

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        done.set()
        return protocol

    job_id = client.enqueue(q, b"x")
    with running(app):
        assert done.wait(10)
        job = wait_for(lambda: _succeeded(client, job_id))
    assert protocol in job.custom_status
