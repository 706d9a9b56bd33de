"""The AckBatcher on its own: outcomes that come in while an Ack call is in flight go out
in the next call, after the ack delay, not whenever the next Dequeue happens to come
(a long poll may hold it back for its whole wait)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from runlater import JobOutcome, JobSuccess, Outcome
from runlater.worker._acks import AckBatcher


class _SlowServer:
    """Stands in for the client: each Ack call waits until the test lets it answer."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.answer = asyncio.Event()
        self.called = asyncio.Event()

    async def ack(
        self, queue: str, succeeded: list[JobSuccess], failed: list[object]
    ) -> list[JobOutcome]:
        self.calls.append([s.job_id for s in succeeded])
        self.called.set()
        await self.answer.wait()
        return [JobOutcome(s.job_id, Outcome.ACKNOWLEDGED) for s in succeeded]


def test_an_outcome_that_comes_in_during_an_ack_call_goes_out_after_it() -> None:
    async def scenario() -> list[list[str]]:
        server = _SlowServer()
        acks = AckBatcher(server, "q", timedelta(milliseconds=5), asyncio.Event())  # type: ignore[arg-type]
        acks.add(JobSuccess("q.0.a", "t"))
        await asyncio.wait_for(server.called.wait(), 5)  # the first Ack call is in flight
        server.called.clear()
        acks.add(JobSuccess("q.0.b", "t"))
        server.answer.set()
        await asyncio.wait_for(server.called.wait(), 5)  # then a second call, on its own
        return server.calls

    assert asyncio.run(scenario()) == [["q.0.a"], ["q.0.b"]]
