"""One queue's side of the worker: its slots, the jobs running in them, and their fate.

The puller (_streamer.py or _poller.py) fills free slots with start(); each job runs as
an asyncio task (an `async def` handler) or on one of the queue's handler threads (a
plain function, _threads.py), its claim kept alive by the queue's ClaimKeeper, and its
outcome goes to the AckBatcher (or, for a Snooze, straight to a Checkpoint). At shutdown
release_all() gives the jobs still running back to PENDING.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from .._errors import RunlaterError
from .._tracing import process_span
from .._types import DequeuedJob, JobCheckpoint, JobFailure
from ..async_client import AsyncClient
from ..control import Snooze
from ..retry import RetryPolicy
from ._acks import AckBatcher
from ._claims import CHECKPOINT_BATCH_MAX, ClaimKeeper
from ._outcome import Handler, Result, result_of_error, result_of_value, truncate
from ._poller import Poller
from ._streamer import StreamPuller
from ._threads import Ended, HandlerThreads

if TYPE_CHECKING:
    from ._worker import Worker

log = logging.getLogger("runlater.worker")


@dataclass
class Registration:
    queue: str
    fn: Handler
    is_async: bool
    concurrency: int
    retry_policy: RetryPolicy | None


@dataclass
class Running:
    """One job in flight, and the flags the shutdown and the claim keeper set."""

    job: DequeuedJob
    task: asyncio.Task[None] | None = None  # an async handler's task
    released: bool = False  # given back with move_to_pending at shutdown: ignore its result
    lost: bool = False  # the claim was refused on renewal: another worker may have it


class QueueRunner:
    """Running jobs, ack batching and claim renewal for one queue; the puller fills it."""

    def __init__(
        self,
        worker: Worker,
        reg: Registration,
        client: AsyncClient,
        stopping: asyncio.Event,
        force: asyncio.Event,
    ) -> None:
        self.w = worker
        self.reg = reg
        self.client = client
        self.stopping = stopping
        self.force = force
        self.running: dict[str, Running] = {}
        self.acks = AckBatcher(client, reg.queue, worker.ack_delay, stopping)
        self.claims = ClaimKeeper(client, reg.queue, worker.clock, self._claim_lost)
        self.threads: HandlerThreads[Running] | None = (
            None
            if reg.is_async
            else HandlerThreads(
                lambda state: _traced_call(reg.fn, state.job),
                reg.concurrency,
                f"runlater-{reg.queue}",
                self._thread_done,
            )
        )
        self._snoozes: set[asyncio.Task[None]] = set()
        self.changed = asyncio.Event()  # a slot freed or stop requested
        self.on_change: Callable[[], None] | None = None  # the stream puller's poke
        self.abandoned_threads = 0
        self.batch = min(1000, worker.batch_size or reg.concurrency)
        # Before asking, wait briefly for half a batch of free slots (fewer, fuller requests).
        self.refill_at = max(1, -(-min(self.batch, reg.concurrency) // 2))
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
        self.claims.track(job)
        if self.threads is not None:
            self.threads.submit(state)
        else:
            state.task = asyncio.create_task(
                self._run_async(state), name=f"runlater-job-{job.job_id}"
            )

    async def _run_async(self, state: Running) -> None:
        job = state.job
        try:
            with process_span(job):
                value = await self.reg.fn(job)  # type: ignore[misc]
        except asyncio.CancelledError:
            # Only the shutdown cancels jobs, after releasing them.
            if not state.released:
                raise
            return
        except Exception as exc:  # noqa: BLE001 - any handler error is a failed attempt
            self._finished(state, (None, exc))
            return
        self._finished(state, (value, None))

    def _thread_done(self, state: Running, ended: Ended) -> None:
        if state.released:
            self.abandoned_threads -= 1  # it came back after all
        self._finished(state, ended)

    def _finished(self, state: Running, ended: Ended) -> None:
        """A handler returned or raised: free its slot, then report its outcome."""
        job = state.job
        if state.released:
            return
        self.claims.untrack(job.job_id)
        self.running.pop(job.job_id, None)
        value, error = ended
        try:
            if error is None:
                outcome: Result = result_of_value(job, value, self.reg.retry_policy)
            elif isinstance(error, Exception):
                outcome = result_of_error(job, error, self.reg.retry_policy)
            else:  # SystemExit, KeyboardInterrupt from a handler thread: still a failure
                outcome = result_of_error(job, RuntimeError(repr(error)), self.reg.retry_policy)
        except Exception:
            # A bug past the handler (say, an exception whose str() raises): still report
            # the attempt, so the job does not sit RUNNING until its claim times out.
            log.exception("job %s on %s: could not make its outcome", job.job_id, job.queue)
            outcome = JobFailure(job.job_id, job.claim_token, "worker error: see its log")
        # Outcome queued before the slot is announced, so whoever fills the slot carries it.
        if not state.lost:
            if isinstance(outcome, Snooze):
                task = asyncio.create_task(self._snooze(job, outcome))
                self._snoozes.add(task)
                task.add_done_callback(self._snoozes.discard)
            else:
                self.acks.add(outcome)
        self.notify()

    def _claim_lost(self, job_id: str) -> None:
        state = self.running.get(job_id)
        if state is not None:
            state.lost = True

    async def _snooze(self, job: DequeuedJob, snooze: Snooze) -> None:
        try:
            run_after = self.w.clock() + snooze.delay
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

    async def until_idle(self, deadline: float) -> None:
        """Waits until no job is running (or the loop time `deadline`, or a forced stop)."""
        loop = asyncio.get_running_loop()
        while self.running and not self.force.is_set():
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            self.changed.clear()
            force = asyncio.ensure_future(self.force.wait())
            change = asyncio.ensure_future(self.changed.wait())
            await asyncio.wait(
                {force, change}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
            force.cancel()
            change.cancel()

    async def release_all(self) -> None:
        """Gives every still-running job back to PENDING (no attempt charged)."""
        left = list(self.running.values())
        if not left:
            return
        for s in left:
            s.released = True
            if s.task is not None:
                s.task.cancel()
            else:
                self.abandoned_threads += 1  # a thread cannot be interrupted
            self.claims.untrack(s.job.job_id)
        self.running.clear()
        await self.release([(s.job, s.lost) for s in left])
        await asyncio.gather(*(s.task for s in left if s.task), return_exceptions=True)

    async def release(self, jobs: list[tuple[DequeuedJob, bool]]) -> None:
        """Checkpoints (job, lost) pairs back to PENDING, skipping jobs whose claim is lost."""
        cps = [
            JobCheckpoint(job.job_id, job.claim_token, move_to_pending=True)
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

    async def close(self) -> None:
        """After the drain: snoozes in flight land, claim renewal and handler threads end."""
        await asyncio.gather(*self._snoozes, return_exceptions=True)
        await self.claims.close()
        if self.threads is not None:
            self.threads.stop()


def _traced_call(fn: Handler, job: DequeuedJob) -> object:
    """A plain handler's call on its thread, inside the job's process span."""
    with process_span(job):
        return fn(job)
