"""Poll mode: Dequeue calls that ask for as many jobs as a queue has free slots.

Each call carries the outcomes finished since the last one, and long-polls when it
carries none (a call with acks returns at once: its answer confirms them now, and a stop
that cut it short would leave their fate unknown). With room for several batches
(concurrency // batch_size >= 2) up to four calls are in flight at once, so slots do not
sit idle while one travels; jobs asked for by calls in flight count as taken
(QueueRunner.requested).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import TYPE_CHECKING

from .._errors import RunlaterError
from .._types import DequeueResult

if TYPE_CHECKING:
    from ._runner import QueueRunner

log = logging.getLogger("runlater.worker")


class Poller:
    def __init__(self, runner: QueueRunner) -> None:
        self.r = runner
        # With room for several batches, one Dequeue at a time leaves slots idle while each
        # call travels: keep up to that many calls in flight (at most 4).
        self.pullers = max(1, min(4, runner.reg.concurrency // runner.batch))

    async def run(self) -> None:
        """Runs the queue's pullers; returns after stop, once their Dequeue calls have ended."""
        r = self.r
        stop_wait = asyncio.create_task(r.stopping.wait())
        stop_wait.add_done_callback(lambda _t: r.changed.set())
        pullers = [asyncio.create_task(self._pull()) for _ in range(self.pullers)]
        try:
            await asyncio.gather(*pullers)
        finally:
            # A puller only ends early on a bug: stop the others too, and let them finish
            # their calls (and release what those bring) before the shutdown goes on.
            r.stopping.set()
            await asyncio.gather(*pullers, return_exceptions=True)
            stop_wait.cancel()

    async def _pull(self) -> None:
        """One puller: Dequeue for free slots, start what comes, repeat until stop."""
        r = self.r
        backoff = 0.1
        while not r.stopping.is_set():
            await self._wait_for_slots()
            if r.stopping.is_set():
                break
            # Whichever puller goes next takes the acks finished so far.
            succeeded, failed = r.acks.take()
            limit = min(r.free, r.batch)
            r.requested += limit
            try:
                poll = asyncio.create_task(
                    r.client.dequeue(
                        r.reg.queue,
                        limit=limit,
                        wait=timedelta(0) if succeeded or failed else r.w.poll_wait,
                        worker_id=r.w.worker_id,
                        succeeded=succeeded,
                        failed=failed,
                    )
                )
                completed = await self._finish_poll(poll)
            finally:
                # The slots come back; the jobs this call got are counted as running below,
                # before any other puller can run and look at the free slots.
                r.requested -= limit
                r.changed.set()
            if not completed:
                # Stop: the poll was cancelled, its acks (if any) may not have landed.
                r.acks.put_back(succeeded, failed)
                break
            try:
                result = poll.result()
            except RunlaterError as err:
                r.acks.put_back(succeeded, failed)
                log.warning("dequeue from %s failed: %s", r.reg.queue, err)
                await r.sleep_unless_stopping(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff = 0.1
            r.acks.check_results(result.ack_results)
            if r.stopping.is_set():
                # Handed out while we were stopping: give them straight back.
                await r.release([(j, False) for j in result.jobs])
                break
            for job in result.jobs:
                r.start(job)

    async def _finish_poll(self, poll: asyncio.Task[DequeueResult]) -> bool:
        """Waits for a Dequeue; False if a stop cut it short (cancelled it).

        As in the TypeScript and Java workers, a stop cuts a long poll short: the server
        hands back the jobs it was starting for a call whose caller has gone, so none is
        left RUNNING until its claim times out.
        """
        r = self.r
        stop_wait = asyncio.create_task(r.stopping.wait())
        try:
            await asyncio.wait([poll, stop_wait], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop_wait.cancel()
        if poll.done():
            return True
        poll.cancel()
        await asyncio.gather(poll, return_exceptions=True)
        return False

    async def _wait_for_slots(self) -> None:
        """Returns once a slot is free (or on stop), with nothing awaited after the check."""
        r = self.r
        await self._until_free(1)
        # If slots are still taken, give jobs a moment to finish (and calls in flight to
        # come back) so that one Dequeue carries several acks and asks for several jobs.
        held = len(r.running) + r.requested
        if held and r.free < r.refill_at and not r.stopping.is_set():
            try:
                await asyncio.wait_for(self._until_free(r.refill_at), r.w.ack_delay.total_seconds())
            except asyncio.TimeoutError:
                pass
            # Another puller may have taken the freed slots while this one waited.
            await self._until_free(1)

    async def _until_free(self, n: int) -> None:
        r = self.r
        while r.free < n and not r.stopping.is_set():
            r.changed.clear()
            await r.changed.wait()
