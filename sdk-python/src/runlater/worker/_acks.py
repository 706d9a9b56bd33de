"""The outcomes of finished jobs of one queue, on their way to the server in batches.

The cheap path is the next Dequeue or stream message: the puller take()s everything
pending and sends it along. When none is coming soon (all slots busy, or long polls
outstanding) a short timer (ack_delay) sends the batch on its own: on the open
DequeueStream if there is one (the `carrier`), else with one Ack call. A batch whose call
failed, or that a broken stream left unanswered, is put back and sent again: re-sending
an applied ack is harmless, it comes back STALE_CLAIM.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import timedelta

from .._errors import RunlaterError
from .._types import JobFailure, JobOutcome, JobSuccess, Outcome
from ..async_client import AsyncClient

log = logging.getLogger("runlater.worker")

# Most outcomes the server takes in one Ack (limits.ackBatchMax): a bigger one is refused whole.
ACK_BATCH_MAX = 10_000


class AckBatcher:
    def __init__(
        self, client: AsyncClient, queue: str, delay: timedelta, stopping: asyncio.Event
    ) -> None:
        self.client = client
        self.queue = queue
        self.delay = delay
        self.stopping = stopping
        self.succeeded: list[JobSuccess] = []
        self.failed: list[JobFailure] = []
        # Ids of acks put back after a call whose fate is unknown (failed or cancelled):
        # the server may have applied them already, so a STALE_CLAIM for them is expected.
        self.resent: set[str] = set()
        # When the delay runs out, first offered the pending outcomes: it sends them some
        # other way (the DequeueStream) and returns True, or returns False for an Ack call.
        self.carrier: Callable[[], bool] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._flush_task: asyncio.Task[None] | None = None
        # After a failed Ack call, the next waits longer (doubling up to 5 s), so that a
        # server that is down is not called 20 times a second.
        self._retry_s = 0.0

    def __len__(self) -> int:
        return len(self.succeeded) + len(self.failed)

    def add(self, outcome: JobSuccess | JobFailure) -> None:
        if isinstance(outcome, JobSuccess):
            self.succeeded.append(outcome)
        else:
            self.failed.append(outcome)
        self._schedule()

    def take(self) -> tuple[list[JobSuccess], list[JobFailure]]:
        """Hands over what is pending (at most ACK_BATCH_MAX) to send along with a request."""
        if len(self) <= ACK_BATCH_MAX:
            s, f = self.succeeded, self.failed
            self.succeeded, self.failed = [], []
            self._cancel_timer()
        else:  # only after many failed calls: the rest goes with the next request
            s, self.succeeded = self.succeeded[:ACK_BATCH_MAX], self.succeeded[ACK_BATCH_MAX:]
            room = ACK_BATCH_MAX - len(s)
            f, self.failed = self.failed[:room], self.failed[room:]
        return s, f

    def put_back(self, s: list[JobSuccess], f: list[JobFailure]) -> None:
        """Takes back a batch whose fate is unknown, to go out with the next request."""
        self.succeeded[:0] = s
        self.failed[:0] = f
        self.resent.update(x.job_id for x in s)
        self.resent.update(x.job_id for x in f)
        if not self.stopping.is_set():  # at shutdown final_flush() sends them
            self._schedule()

    def check_results(self, results: list[JobOutcome]) -> None:
        """Logs the jobs the server refused (stale claim, unknown id): not applied."""
        for r in results:
            resent = r.job_id in self.resent
            self.resent.discard(r.job_id)
            if r.outcome == Outcome.ACKNOWLEDGED:
                continue
            if resent and r.outcome == Outcome.STALE_CLAIM:
                log.debug("job %s: re-sent ack was already applied", r.job_id)
            else:
                log.warning("job %s: %s (claim expired or job gone)", r.job_id, r.outcome.name)

    def _schedule(self) -> None:
        if self._timer is not None or not self:
            return
        if self._flush_task is not None and not self._flush_task.done():
            return  # the Ack call in flight schedules again when it is done
        delay = max(self.delay.total_seconds(), self._retry_s)
        self._timer = asyncio.get_running_loop().call_later(delay, self._due)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _due(self) -> None:
        self._timer = None
        if self.carrier is not None and self.carrier():
            return
        self._flush_task = asyncio.create_task(self._flush_and_reschedule())

    async def _flush_and_reschedule(self) -> None:
        try:
            await self.flush()
        finally:
            # No longer "a call in flight": _schedule() below must not wait for this task.
            self._flush_task = None
        if not self.stopping.is_set():
            self._schedule()  # outcomes that came in during the call, or a failed one

    async def final_flush(self) -> None:
        """At shutdown: let an Ack call in flight land, then send whatever is left."""
        self._cancel_timer()
        if self._flush_task is not None:
            await asyncio.gather(self._flush_task, return_exceptions=True)
        while self:
            sent = len(self)
            await self.flush()
            if len(self) >= sent:  # the call failed: the claims will time out
                break

    async def flush(self) -> None:
        """Sends what is pending in one Ack call."""
        if not self:
            return
        succeeded, failed = self.take()
        try:
            results = await self.client.ack(self.queue, succeeded=succeeded, failed=failed)
        except RunlaterError as err:
            log.warning("ack on %s failed, will retry: %s", self.queue, err)
            self._retry_s = min(max(0.1, self._retry_s * 2), 5.0)
            self.put_back(succeeded, failed)
            return
        self._retry_s = 0.0
        self.check_results(results)
