"""The outcomes of finished jobs of one queue, on their way to the server in batches.

The cheap path is the next Dequeue: a puller take()s everything pending and piggy-backs
it. When no Dequeue is coming soon (all slots busy, or long polls outstanding) a short
timer (ack_delay) sends the batch with one Ack call instead. A batch whose call failed
is put back and sent again: re-sending an applied ack is harmless, it comes back
STALE_CLAIM.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from .._errors import RunlaterError
from .._types import JobFailure, JobOutcome, JobSuccess, Outcome
from ..async_client import AsyncClient

log = logging.getLogger("runlater.worker")


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
        self.flush_task: asyncio.Task[None] | None = None

    def __bool__(self) -> bool:
        return bool(self.succeeded or self.failed)

    def add(self, outcome: JobSuccess | JobFailure) -> None:
        if isinstance(outcome, JobSuccess):
            self.succeeded.append(outcome)
        else:
            self.failed.append(outcome)
        self._schedule_flush()

    def take(self) -> tuple[list[JobSuccess], list[JobFailure]]:
        """Hands over everything pending (to piggy-back on a Dequeue)."""
        s, f = self.succeeded, self.failed
        self.succeeded, self.failed = [], []
        return s, f

    def put_back(self, s: list[JobSuccess], f: list[JobFailure]) -> None:
        """Takes back a batch whose call failed, to go out with the next Dequeue or Ack."""
        self.succeeded[:0] = s
        self.failed[:0] = f
        self.resent.update(x.job_id for x in s)
        self.resent.update(x.job_id for x in f)

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

    def _schedule_flush(self) -> None:
        if self.flush_task is None or self.flush_task.done():
            self.flush_task = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        # If the dequeue loop wakes first it takes the acks along; else send them alone.
        await asyncio.sleep(self.delay.total_seconds())
        await self.flush()

    async def final_flush(self) -> None:
        """At shutdown: let a timer's Ack in flight land, then send whatever is left."""
        if self.flush_task is not None:
            await asyncio.gather(self.flush_task, return_exceptions=True)
        await self.flush()

    async def flush(self) -> None:
        """Sends everything pending in one Ack call."""
        if not self:
            return
        succeeded, failed = self.take()
        try:
            results = await self.client.ack(self.queue, succeeded=succeeded, failed=failed)
        except RunlaterError as err:
            log.warning("ack on %s failed, will retry: %s", self.queue, err)
            self.put_back(succeeded, failed)
            if not self.stopping.is_set():
                self._schedule_flush()
            return
        self.check_results(results)
