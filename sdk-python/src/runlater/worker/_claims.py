"""Claim renewal (PinLater's heartbeat): keeps the claims of a queue's running jobs alive.

A claim is renewed once half its lifetime has passed, by a Checkpoint carrying only the
job id and claim token (which renews it for the queue's claim timeout). One timer for
the whole queue, and one batched Checkpoint for every claim due at that moment (claims
due within the next quarter of their lifetime ride along): many long jobs cost one call
per round, not a task and a call per job. The reference is sdk-ts's claim-keeper.ts.

Two clocks. The server's expiries are wall-clock times: the worker's `clock` turns each
into a lifetime once, when the job arrives (expiry minus clock()). From then on renewals
are scheduled on the event loop's monotonic clock, so a wall clock that jumps, or one
that stands still (a test against a server on a manual clock), never delays a renewal:
each comes half a lifetime after the last.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from .._errors import RunlaterError
from .._types import DequeuedJob, JobCheckpoint, Outcome
from ..async_client import AsyncClient

log = logging.getLogger("runlater.worker")

# Renewing more often than this buys nothing and floods the server.
MIN_RENEW_DELAY_S = 0.01
# Most checkpoints the server takes in one call (limits.checkpointBatchMax).
CHECKPOINT_BATCH_MAX = 1000


@dataclass
class _Claim:
    job_id: str
    claim_token: str
    lifetime: float  # seconds, as read when the job arrived
    expires_at: float  # loop time
    renew_at: float  # loop time
    renewing: bool = False


class ClaimKeeper:
    def __init__(
        self,
        client: AsyncClient,
        queue: str,
        clock: Callable[[], datetime],
        on_lost: Callable[[str], None],
    ) -> None:
        self.client = client
        self.queue = queue
        self.clock = clock
        self.on_lost = on_lost
        self._claims: dict[str, _Claim] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = float("inf")
        self._renewals: set[asyncio.Task[None]] = set()
        self._loop = asyncio.get_running_loop()

    def track(self, job: DequeuedJob) -> None:
        if job.claim_expires_at is None:
            return  # nothing to renew
        lifetime = (job.claim_expires_at - self.clock()).total_seconds()
        now = self._loop.time()
        claim = _Claim(job.job_id, job.claim_token, lifetime, 0.0, 0.0)
        self._from(claim, now)
        self._claims[job.job_id] = claim
        self._arm(claim.renew_at)

    def untrack(self, job_id: str) -> None:
        self._claims.pop(job_id, None)
        if not self._claims:
            self._disarm()

    async def close(self) -> None:
        self._claims.clear()
        self._disarm()
        for task in self._renewals:
            task.cancel()
        await asyncio.gather(*self._renewals, return_exceptions=True)

    @staticmethod
    def _from(claim: _Claim, now: float) -> None:
        """The claim runs `lifetime` from `now` (loop time), renewed halfway."""
        claim.expires_at = now + claim.lifetime
        claim.renew_at = now + max(MIN_RENEW_DELAY_S, claim.lifetime / 2)

    def _arm(self, at: float) -> None:
        if at >= self._timer_at:
            return
        self._disarm()
        self._timer_at = at
        self._timer = self._loop.call_at(max(at, self._loop.time() + MIN_RENEW_DELAY_S), self._fire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = float("inf")

    def _rearm(self) -> None:
        waiting = [c.renew_at for c in self._claims.values() if not c.renewing]
        if waiting:
            self._arm(min(waiting))

    def _fire(self) -> None:
        self._timer = None
        self._timer_at = float("inf")
        now = self._loop.time()
        # Due now, or within the next quarter of its lifetime: renew those together.
        due = [
            c
            for c in self._claims.values()
            if not c.renewing and c.renew_at <= now + (c.expires_at - c.renew_at) / 2
        ]
        for c in due:
            c.renewing = True
        self._rearm()
        for i in range(0, len(due), CHECKPOINT_BATCH_MAX):
            task = asyncio.create_task(self._renew(due[i : i + CHECKPOINT_BATCH_MAX]))
            self._renewals.add(task)
            task.add_done_callback(self._renewals.discard)

    async def _renew(self, due: list[_Claim]) -> None:
        sent_at = self._loop.time()
        try:
            results = await self.client.checkpoint(
                self.queue, [JobCheckpoint(c.job_id, c.claim_token) for c in due]
            )
        except RunlaterError as err:
            log.warning("claim renewal of %d job(s) of %s failed: %s", len(due), self.queue, err)
            # Try again soon, well before the expiry if there is time left; if the claim
            # has already run out, the answer to the next try says whether it is lost.
            failed_at = self._loop.time()
            for c in due:
                c.renewing = False
                left = c.expires_at - failed_at
                c.renew_at = failed_at + (left / 4 if left > 0 else 0.5)
            self._rearm()
            return
        for claim, result in zip(due, results):
            claim.renewing = False
            if self._claims.get(claim.job_id) is not claim:
                continue  # finished meanwhile
            if result.outcome == Outcome.ACKNOWLEDGED:
                # Renewed for the queue's claim timeout, counted from the request.
                self._from(claim, sent_at)
                continue
            del self._claims[claim.job_id]
            log.warning("claim of job %s lost (%s)", claim.job_id, result.outcome.name)
            self.on_lost(claim.job_id)
        self._rearm()
