"""What a Worker says at start, and its claim renewal on a clock that stands still.

A worker started on a queue that does not exist, or against a server that is not there,
fails at once, naming the queue and the server, and takes no job (the TypeScript and Java
workers do the same: conformance scenario worker-start-checks). Claim renewals are timed
on the loop's monotonic clock, so a wall clock that stands still (a server on a manual
clock) still gets one every half lifetime.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
from datetime import datetime, timedelta, timezone

import pytest
from helpers import QueueFactory

from runlater import (
    AsyncClient,
    Client,
    DequeuedJob,
    ErrorReason,
    JobCheckpoint,
    JobOutcome,
    JobSpec,
    JobState,
    NotFoundError,
    Outcome,
    UnavailableError,
    Worker,
)
from runlater.worker._claims import ClaimKeeper


def _dead_url() -> str:
    """A URL where nothing listens: a port taken from the OS and given back."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_fails_at_start_on_a_queue_that_does_not_exist(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    present = make_queue()
    app = Worker(server_url)
    app.register(present, lambda job: None)
    app.register("no_such_queue", lambda job: None)
    with pytest.raises(NotFoundError) as caught:
        app.run(handle_signals=False)
    err = caught.value
    assert err.reason is ErrorReason.QUEUE_NOT_FOUND
    assert err.message.startswith(f'worker cannot start on queue "no_such_queue" at {server_url}: ')
    assert "does not exist" in err.message


def test_a_stop_before_the_worker_has_set_up_is_not_lost(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    # Stopped before run() had its event loop (as a worker just started on a thread can
    # be): that run returns as soon as it starts, and takes no job. The stop was dropped
    # before, and such a worker ran on.
    queue = make_queue()
    [job_id] = client.enqueue_many([JobSpec(queue, b"left alone")])
    app = Worker(server_url)
    app.register(queue, lambda job: "taken")
    app.stop()
    app.run(handle_signals=False)  # returns: a stopped worker does not block
    assert client.get_jobs([job_id]).jobs[0].state is JobState.PENDING


def test_fails_at_start_when_no_server_is_there() -> None:
    url = _dead_url()
    app = Worker(url)
    app.register("q", lambda job: None)
    with pytest.raises(UnavailableError) as caught:
        app.run(handle_signals=False)
    assert caught.value.message.startswith(f'worker cannot start on queue "q" at {url}: ')


class _ManualServer:
    """Stands in for the client: every renewal expires at the frozen now + lifetime."""

    def __init__(self) -> None:
        self.sent_at: list[float] = []

    async def checkpoint(self, queue: str, checkpoints: list[JobCheckpoint]) -> list[JobOutcome]:
        self.sent_at.append(asyncio.get_running_loop().time())
        return [JobOutcome(c.job_id, Outcome.ACKNOWLEDGED) for c in checkpoints]


def test_claims_are_renewed_every_half_lifetime_when_the_wall_clock_stands_still() -> None:
    frozen = datetime(2040, 1, 1, tzinfo=timezone.utc)  # far from the real time
    lifetime = 0.12

    async def scenario() -> tuple[float, list[float]]:
        server = _ManualServer()
        client: AsyncClient = server  # type: ignore[assignment]
        keeper = ClaimKeeper(client, "q", lambda: frozen, on_lost=lambda job_id: None)
        job = DequeuedJob(
            queue="q",
            job_id="q.0.a",
            body=b"",
            priority=1,
            attempt=1,
            attempts_allowed=3,
            claim_token="t",
            claim_expires_at=frozen + timedelta(seconds=lifetime),
            created_at=frozen,
            custom_status="",
        )
        tracked = asyncio.get_running_loop().time()
        keeper.track(job)
        for _ in range(500):
            if len(server.sent_at) >= 3:
                break
            await asyncio.sleep(0.01)
        await keeper.close()
        return tracked, server.sent_at

    tracked, sent_at = asyncio.run(scenario())
    assert len(sent_at) >= 3
    # Timers fire late, never early: no renewal comes sooner than half a lifetime after the last.
    gaps = [sent_at[0] - tracked] + [b - a for a, b in itertools.pairwise(sent_at)]
    assert all(gap >= lifetime / 2 - 0.002 for gap in gaps), gaps
