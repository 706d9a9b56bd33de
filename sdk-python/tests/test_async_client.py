"""AsyncClient: the same calls awaited, against a real server."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from helpers import QueueFactory

from runlater import (
    AsyncClient,
    ErrorReason,
    JobCheckpoint,
    JobSpec,
    JobState,
    JobSuccess,
    NotFoundError,
    Outcome,
    QueueConfig,
)


def test_async_client_round_trip(server_url: str, make_queue: QueueFactory) -> None:
    q = make_queue()

    async def scenario() -> None:
        async with AsyncClient(server_url) as c:
            queue, created = await c.create_queue(q)
            assert (queue.name, created) == (q, False)
            first = await c.enqueue(q, b"one")
            ids = await c.enqueue_many([JobSpec(q, b"two"), JobSpec(q, b"three")])
            assert (await c.count_jobs(q, state=JobState.PENDING)) == 3
            assert [j.job_id async for j in c.iter_jobs(q, page_size=1)] == [*reversed(ids), first]

            got = await c.dequeue(q, limit=3, wait=timedelta(seconds=1))
            assert sorted(j.job_id for j in got.jobs) == sorted([first, *ids])
            by_id = {j.job_id: j for j in got.jobs}
            [renew] = await c.checkpoint(q, [JobCheckpoint(first, by_id[first].claim_token)])
            assert renew.outcome is Outcome.ACKNOWLEDGED
            outcomes = await c.ack(
                q, succeeded=[JobSuccess(j.job_id, j.claim_token) for j in got.jobs]
            )
            assert {o.outcome for o in outcomes} == {Outcome.ACKNOWLEDGED}
            job = await c.get_job(first)
            assert job is not None and job.state is JobState.SUCCEEDED

            updated = await c.update_queue(q, QueueConfig(paused=True))
            assert updated.config.paused is True
            assert (await c.get_queue(q)).stats.succeeded == 3
            assert q in [x.name for x in await c.list_queues()]
            assert (await c.delete_jobs(q, JobState.SUCCEEDED)) == 3
            assert (await c.retry_failed_jobs(q)) == 0
            assert (await c.scan_jobs(q)).jobs == []
            try:
                await c.get_queue(q + "_nope")
            except NotFoundError as err:
                assert err.reason is ErrorReason.QUEUE_NOT_FOUND
            else:
                raise AssertionError("expected NotFoundError")

    asyncio.run(scenario())


def test_async_client_ordering_key_round_trips(server_url: str, make_queue: QueueFactory) -> None:
    q = make_queue()

    async def scenario() -> None:
        async with AsyncClient(server_url) as c:
            one = await c.enqueue(q, b"one", ordering_key="customer-7")
            [two] = await c.enqueue_many([JobSpec(q, b"two", ordering_key="customer-8")])
            jobs = (await c.get_jobs([one, two])).jobs
            assert [j.ordering_key for j in jobs] == ["customer-7", "customer-8"]

    asyncio.run(scenario())
