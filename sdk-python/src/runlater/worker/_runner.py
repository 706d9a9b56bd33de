"""One queue's side of the worker: its slots, the jobs running in them, and their fate.

The puller (_streamer.py or _poller.py) fills free slots with start(); each job runs as an asyncio task
(a blocking handler in the worker's thread pool) with a claim heartbeat beside it, and
its outcome goes to the AckBatcher (or, for a Snooze, straight to a Checkpoint). At
shutdown release_all() gives the jobs still running back to PENDING.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from .._convert import utcnow
from .._errors import RunlaterError
from .._types import DequeuedJob, JobCheckpoint, JobFailure
from ..async_client import AsyncClient
from ..control import Snooze
from ..retry import RetryPolicy
from ._acks import AckBatcher
from ._heartbeat import renew_claim
from ._outcome import Handler, Result, result_of_error, result_of_value, truncate
from ._poller import Poller
from ._streamer import StreamPuller

if TYPE_CHECKING:
    from ._worker import Worker

log = logging.getLogger("runlater.worker")

# Most checkpoints the server takes in one call (limits.checkpointBatchMax): more are
# refused whole.
CHECKPOINT_BATCH_MAX = 1000


@dataclass
class Registration:
    queue: str
    fn: Handler
    is_async: bool
    concurrency: int
    retry_policy: RetryPolicy | None


@dataclass
class Running:
    """One job in flight: its task, and flags the shutdown and heartbeat set."""

    job: DequeuedJob
    task: asyncio.Task[None] | None = None
    released: bool = False  # given back with move_to_pending at shutdown: ignore its result
    lost: bool = False  # the claim was refused on renewal: another worker may have it


class QueueRunner:
    """Running jobs, ack batching and claim renewal for one queue; the puller fills it."""

    def __init__(
        self,
        worker: Worker,
        reg: Registration,
        client: AsyncClient,
        pool: ThreadPoolExecutor,
        stopping: asyncio.Event,
        force: asyncio.Event,
    ) -> None:
        self.w = worker
        self.reg = reg
        self.client = client
        self.pool = pool
        self.stopping = stopping
        self.force = force
        self.running: dict[str, Running] = {}
        self.acks = AckBatcher(client, reg.queue, worker.ack_delay, stopping)
        self.changed = asyncio.Event()  # a slot freed or stop requested
        self.on_change: Callable[[], None] | None = None  # the stream puller's poke
        self.abandoned_threads = 0
        self.batch = min(1000, worker.batch_size or reg.concurrency)
        # Before asking, wait briefly for this many free slots (fewer, fuller requests).
        self.refill_at = max(1, min(self.batch, reg.concurrency) // 2)
        # Jobs asked for by the Dequeue calls in flight, or credits granted on the stream
        # and not yet used: slots spoken for, so that the pullers never ask for more jobs
        # than there are free slots.
        self.requested = 0

    @property
    def free(self) -> int:
        return self.reg.concurrency - len(self.running) - self.requested

    async def pull(self) -> None:
        """Takes jobs into free slots until stop; returns once no request is in flight."""
        if self.w.dequeue_mode == "stream":
            await StreamPuller(self).run()
        else:
            await Poller(self).run()

    def notify(self) -> None:
        """A slot freed or an outcome is waiting: wake whoever fills slots."""
        self.changed.set()
        if self.on_change is not None:
            self.on_change()

    async def sleep_unless_stopping(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.stopping.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    # --- one job --------------------------------------------------------------------

    def start(self, job: DequeuedJob) -> None:
        state = Running(job)
        self.running[job.job_id] = state
        state.task = asyncio.create_task(self._run_job(state), name=f"runlater-job-{job.job_id}")

    async def _run_job(self, state: Running) -> None:
        job = state.job

        def lost() -> None:
            state.lost = True

        heartbeat = asyncio.create_task(renew_claim(self.client, job, lost))
        try:
            outcome = await self._invoke(job)
        except asyncio.CancelledError:
            # Only the shutdown cancels jobs, after releasing them.
            if not state.released:
                raise
            return
        except Exception:
            # A bug past the handler (say, an exception whose str() raises): still report
            # the attempt, so the job does not sit RUNNING until its claim times out.
            log.exception("job %s on %s: could not make its outcome", job.job_id, job.queue)
            outcome = JobFailure(job.job_id, job.claim_token, "worker error: see its log")
        finally:
            heartbeat.cancel()
            # Remove before anything is awaited so the slot frees at once.
            if not state.released:
                self.running.pop(job.job_id, None)
            # No await between this and adding the outcome below: a stream's poke sends
            # on a later loop iteration, and a waiting Dequeue runs later too.
            self.notify()
        if state.released or state.lost:
            return
        if isinstance(outcome, Snooze):
            await self._snooze(job, outcome)
            return
        self.acks.add(outcome)

    async def _invoke(self, job: DequeuedJob) -> Result:
        """Runs the handler and turns its result or exception into an outcome."""
        try:
            if self.reg.is_async:
                value = await self.reg.fn(job)  # type: ignore[misc]
            else:
                loop = asyncio.get_running_loop()
                value = await loop.run_in_executor(self.pool, self.reg.fn, job)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any handler error is a failed attempt
            return result_of_error(job, exc, self.reg.retry_policy)
        return result_of_value(job, value, self.reg.retry_policy)

    async def _snooze(self, job: DequeuedJob, snooze: Snooze) -> None:
        try:
            run_after = utcnow() + snooze.delay
        except OverflowError:  # past the year 9999: as good as never
            run_after = datetime.max.replace(tzinfo=timezone.utc)
        cp = JobCheckpoint(
            job.job_id,
            job.claim_token,
            move_to_pending=True,
            run_after=run_after,
            custom_status=truncate(snooze.custom_status),
        )
        try:
            self.acks.check_results(await self.client.checkpoint(job.queue, [cp]))
        except RunlaterError as err:
            log.warning("snooze of job %s failed: %s", job.job_id, err)

    # --- shutdown -------------------------------------------------------------------

    async def release_all(self) -> None:
        """Gives every still-running job back to PENDING (no attempt charged)."""
        left = [s for s in self.running.values() if s.task and not s.task.done()]
        if not left:
            return
        for s in left:
            s.released = True
            if not self.reg.is_async:
                self.abandoned_threads += 1  # a thread cannot be interrupted
            assert s.task is not None
            s.task.cancel()
        await self.release([(s.job, s.lost) for s in left])
        await asyncio.gather(*(s.task for s in left if s.task), return_exceptions=True)
        self.running.clear()

    async def release(self, jobs: list[tuple[DequeuedJob, bool]]) -> None:
        """Checkpoints (job, lost) pairs back to PENDING, skipping jobs whose claim is lost."""
        cps = [
            JobCheckpoint(
                job.job_id,
                job.claim_token,
                move_to_pending=True,
                custom_status="released: worker shutting down",
            )
            for job, lost in jobs
            if not lost
        ]
        if not cps:
            return
        log.info("releasing %d unfinished job(s) of %s", len(cps), self.reg.queue)
        for i in range(0, len(cps), CHECKPOINT_BATCH_MAX):
            chunk = cps[i : i + CHECKPOINT_BATCH_MAX]
            try:
                self.acks.check_results(await self.client.checkpoint(self.reg.queue, chunk))
            except RunlaterError as err:
                log.warning("release of %d job(s) failed: %s", len(chunk), err)
