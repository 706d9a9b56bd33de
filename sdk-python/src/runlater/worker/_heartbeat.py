"""Claim renewal: keeps a running job's claim alive so it may run past the claim timeout."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from .._convert import utcnow
from .._errors import RunlaterError
from .._types import DequeuedJob, JobCheckpoint, Outcome
from ..async_client import AsyncClient

log = logging.getLogger("runlater.worker")


async def renew_claim(client: AsyncClient, job: DequeuedJob, on_lost: Callable[[], None]) -> None:
    """Extends the claim each time half its lifetime has passed (a heartbeat), until
    cancelled or the server refuses a renewal (then calls on_lost and returns).

    The lifetime is taken from claim_expires_at at receipt; a renewal without
    extend_claim_by extends by the queue's claim timeout, i.e. the same lifetime.
    """
    if job.claim_expires_at is None:
        return
    lifetime = (job.claim_expires_at - utcnow()).total_seconds()
    interval = max(0.05, lifetime / 2)
    while True:
        await asyncio.sleep(interval)
        try:
            results = await client.checkpoint(
                job.queue, [JobCheckpoint(job.job_id, job.claim_token)]
            )
        except RunlaterError as err:
            log.warning("claim renewal of job %s failed: %s", job.job_id, err)
            continue
        if results and results[0].outcome != Outcome.ACKNOWLEDGED:
            log.warning("claim of job %s lost (%s)", job.job_id, results[0].outcome.name)
            on_lost()
            return
