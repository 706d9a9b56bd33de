"""Worker: runs handlers for queues, with batched long-poll dequeue and batched acks.

    app = Worker(Client("http://127.0.0.1:8080"), concurrency=8)

    @app.handler("emails")
    def send(job: DequeuedJob) -> str | None: ...

    app.run()   # until SIGTERM/SIGINT, then a graceful shutdown

Everything runs on one asyncio loop: `async def` handlers as tasks, plain functions in a
thread pool. Each queue has its own runner (_QueueRunner) whose pullers ask for as many
jobs as it has free slots and piggy-back the outcomes of finished jobs on the next
Dequeue; a short timer sends them with Ack instead while long polls are outstanding.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import signal
import socket
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, TypeVar

from ._convert import utcnow
from ._errors import RunlaterError
from ._types import (
    DequeuedJob,
    DequeueResult,
    JobCheckpoint,
    JobFailure,
    JobOutcome,
    JobSuccess,
    Outcome,
)
from .async_client import AsyncClient
from .client import Client
from .control import DoNotRetry, RetryAfter, Snooze
from .retry import RetryPolicy

log = logging.getLogger("runlater.worker")

HandlerResult = str | Snooze | None
Handler = Callable[[DequeuedJob], HandlerResult | Awaitable[HandlerResult]]
_H = TypeVar("_H", bound=Handler)

# custom_status is cut by the server past 1,000 characters in all; keep one failure short.
MAX_STATUS_CHARS = 500


@dataclass
class _Registration:
    queue: str
    fn: Handler
    is_async: bool
    concurrency: int
    retry_policy: RetryPolicy | None


@dataclass
class _Running:
    """One job in flight: its task, and flags the shutdown and heartbeat set."""

    job: DequeuedJob
    task: asyncio.Task[None] | None = None
    released: bool = False  # given back with move_to_pending at shutdown: ignore its result
    lost: bool = False  # the claim was refused on renewal: another worker may have it


@dataclass
class _AckBuffer:
    succeeded: list[JobSuccess] = field(default_factory=list)
    failed: list[JobFailure] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.succeeded or self.failed)

    def take(self) -> tuple[list[JobSuccess], list[JobFailure]]:
        s, f = self.succeeded, self.failed
        self.succeeded, self.failed = [], []
        return s, f

    # Ids of acks put back after a call whose fate is unknown (failed or cancelled): the
    # server may have applied them already, so a STALE_CLAIM for them is expected.
    resent: set[str] = field(default_factory=set)

    def put_back(self, s: list[JobSuccess], f: list[JobFailure]) -> None:
        # Re-sending an applied ack is harmless: it comes back STALE_CLAIM.
        self.succeeded[:0] = s
        self.failed[:0] = f
        self.resent.update(x.job_id for x in s)
        self.resent.update(x.job_id for x in f)


def _truncate(text: str) -> str:
    return text if len(text) <= MAX_STATUS_CHARS else text[: MAX_STATUS_CHARS - 1] + "…"


class Worker:
    """Registers handlers per queue and runs them until stopped.

    Args:
        client: a Client or AsyncClient (the worker makes its own AsyncClient from a Client's
            settings), or a server URL.
        concurrency: jobs run at once per queue (a handler may set its own).
        batch_size: most jobs asked for in one Dequeue (default: the concurrency). A batch
            of half the concurrency or less keeps several Dequeue calls in flight (up to
            concurrency // batch_size, at most 4), each asking only for free slots.
        poll_wait: long-poll time of each Dequeue when nothing is due (at most 60 s).
        retry_policy: delay for failures that do not say (None: the queue's policy decides).
        shutdown_grace: how long in-flight jobs may finish after a stop before they are
            released back to PENDING.
        ack_delay: longest time a finished job's ack waits to be batched.
        worker_id: free text naming this worker in server logs.
    """

    def __init__(
        self,
        client: Client | AsyncClient | str,
        *,
        concurrency: int = 10,
        batch_size: int | None = None,
        poll_wait: timedelta = timedelta(seconds=5),
        retry_policy: RetryPolicy | None = None,
        shutdown_grace: timedelta = timedelta(seconds=30),
        ack_delay: timedelta = timedelta(milliseconds=50),
        worker_id: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._client_arg = client
        self.concurrency = concurrency
        self.batch_size = batch_size
        self.poll_wait = poll_wait
        self.retry_policy = retry_policy
        self.shutdown_grace = shutdown_grace
        self.ack_delay = ack_delay
        self.worker_id = worker_id or f"py-{socket.gethostname()}-{os.getpid()}"
        self._registrations: dict[str, _Registration] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._force: asyncio.Event | None = None
        self.abandoned_threads = 0

    # --- registration ---------------------------------------------------------------

    def handler(
        self,
        queue: str,
        *,
        concurrency: int | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> Callable[[_H], _H]:
        """Decorator: run `fn(job)` for every job of `queue`."""

        def register(fn: _H) -> _H:
            self.register(queue, fn, concurrency=concurrency, retry_policy=retry_policy)
            return fn

        return register

    def register(
        self,
        queue: str,
        fn: Handler,
        *,
        concurrency: int | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        """Same as the decorator, as a plain call."""
        if queue in self._registrations:
            raise ValueError(f"a handler for queue {queue!r} is already registered")
        self._registrations[queue] = _Registration(
            queue=queue,
            fn=fn,
            is_async=inspect.iscoroutinefunction(fn),
            concurrency=concurrency or self.concurrency,
            retry_policy=retry_policy or self.retry_policy,
        )

    @property
    def queues(self) -> list[str]:
        return list(self._registrations)

    # --- running --------------------------------------------------------------------

    def run(self, *, handle_signals: bool = True) -> None:
        """Runs until stop() or SIGTERM/SIGINT; blocks. A second signal skips the grace."""
        asyncio.run(self.run_async(handle_signals=handle_signals))

    def stop(self, *, force: bool = False) -> None:
        """Asks the worker to shut down gracefully. Safe from any thread or signal handler."""
        loop, stopping, forced = self._loop, self._stopping, self._force
        if loop is None or stopping is None or forced is None:
            return

        def set_flags() -> None:
            if stopping.is_set() or force:
                forced.set()
            stopping.set()

        try:
            loop.call_soon_threadsafe(set_flags)
        except RuntimeError:  # loop already closed
            pass

    async def run_async(self, *, handle_signals: bool = False) -> None:
        """The worker's main coroutine: returns after a graceful shutdown."""
        if not self._registrations:
            raise RuntimeError("no handlers registered")
        self._stopping = asyncio.Event()
        self._force = asyncio.Event()
        self._loop = asyncio.get_running_loop()  # last: stop() works once this is set
        client, owned = self._async_client()
        threads = sum(r.concurrency for r in self._registrations.values() if not r.is_async)
        pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="runlater-job")
        if handle_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._loop.add_signal_handler(sig, self.stop)
        runners = [
            _QueueRunner(self, reg, client, pool, self._stopping, self._force)
            for reg in self._registrations.values()
        ]
        log.info("worker %s started on queues %s", self.worker_id, ", ".join(self.queues))
        loops = [
            asyncio.create_task(r.poll_loop(), name=f"runlater-{r.reg.queue}") for r in runners
        ]
        try:
            stop_wait = asyncio.create_task(self._stopping.wait())
            # A poll loop only ends early on a bug; stop everything then too.
            await asyncio.wait([stop_wait, *loops], return_when=asyncio.FIRST_COMPLETED)
            self._stopping.set()
            await asyncio.gather(*loops, return_exceptions=True)
            await self._drain(runners)
        finally:
            if handle_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    self._loop.remove_signal_handler(sig)
            pool.shutdown(wait=False, cancel_futures=True)
            if owned:
                await client.close()
            for t in loops:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
        log.info("worker %s stopped", self.worker_id)

    def _async_client(self) -> tuple[AsyncClient, bool]:
        c = self._client_arg
        if isinstance(c, AsyncClient):
            return c, False
        if isinstance(c, Client):
            o = c.options
            return AsyncClient(
                o.url, protocol=o.protocol, timeout=o.timeout, headers=o.headers
            ), True
        return AsyncClient(c), True

    async def _drain(self, runners: list[_QueueRunner]) -> None:
        """Lets in-flight jobs finish within the grace, releases the rest, flushes acks."""
        assert self._force is not None
        pending: set[asyncio.Future[Any]] = {
            r.task for runner in runners for r in runner.running.values() if r.task
        }
        if pending:
            log.info("waiting up to %s for %d running job(s)", self.shutdown_grace, len(pending))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + self.shutdown_grace.total_seconds()
            force_wait: asyncio.Future[Any] = asyncio.ensure_future(self._force.wait())
            while pending and not self._force.is_set():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                _done, pending = await asyncio.wait(
                    pending | {force_wait}, timeout=remaining, return_when=asyncio.FIRST_COMPLETED
                )
                pending.discard(force_wait)
            force_wait.cancel()
        await asyncio.gather(*(runner.release_all() for runner in runners))
        await asyncio.gather(*(runner.final_flush() for runner in runners))
        self.abandoned_threads = sum(r.abandoned_threads for r in runners)


class _QueueRunner:
    """Dequeue loop, running jobs, ack buffer and claim renewal for one queue."""

    def __init__(
        self,
        worker: Worker,
        reg: _Registration,
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
        self.running: dict[str, _Running] = {}
        self.acks = _AckBuffer()
        self.changed = asyncio.Event()  # a slot freed or stop requested
        self.flush_task: asyncio.Task[None] | None = None
        self.abandoned_threads = 0
        self.batch = min(1000, worker.batch_size or reg.concurrency)
        # With room for several batches, one Dequeue at a time leaves slots idle while each
        # call travels: keep up to that many calls in flight (at most 4).
        self.pullers = max(1, min(4, reg.concurrency // self.batch))
        # Before asking, wait briefly for this many free slots (see _wait_for_slots).
        self.refill_at = max(1, min(self.batch, reg.concurrency) // 2)
        # Jobs asked for by the Dequeue calls in flight: slots spoken for, so that the
        # pullers together never ask for more jobs than there are free slots.
        self.requested = 0

    @property
    def free(self) -> int:
        return self.reg.concurrency - len(self.running) - self.requested

    # --- dequeue loop ---------------------------------------------------------------

    async def poll_loop(self) -> None:
        """Runs the queue's pullers; returns after stop, once their Dequeue calls have ended."""
        stop_wait = asyncio.create_task(self.stopping.wait())
        stop_wait.add_done_callback(lambda _t: self.changed.set())
        pullers = [asyncio.create_task(self._pull()) for _ in range(self.pullers)]
        try:
            await asyncio.gather(*pullers)
        finally:
            # A puller only ends early on a bug: stop the others too, and let them finish
            # their calls (and release what those bring) before the shutdown goes on.
            self.stopping.set()
            await asyncio.gather(*pullers, return_exceptions=True)
            stop_wait.cancel()

    async def _pull(self) -> None:
        """One puller: Dequeue for free slots, start what comes, repeat until stop."""
        backoff = 0.1
        while not self.stopping.is_set():
            await self._wait_for_slots()
            if self.stopping.is_set():
                break
            # Whichever puller goes next takes the acks finished so far.
            succeeded, failed = self.acks.take()
            limit = min(self.free, self.batch)
            self.requested += limit
            try:
                poll = asyncio.create_task(
                    self.client.dequeue(
                        self.reg.queue,
                        limit=limit,
                        wait=self.w.poll_wait,
                        worker_id=self.w.worker_id,
                        succeeded=succeeded,
                        failed=failed,
                    )
                )
                completed = await self._finish_poll(poll)
            finally:
                # The slots come back; the jobs this call got are counted as running below,
                # before any other puller can run and look at the free slots.
                self.requested -= limit
                self.changed.set()
            if not completed:
                # Forced stop: the poll was cancelled, its acks may not have landed.
                self.acks.put_back(succeeded, failed)
                break
            try:
                result = poll.result()
            except RunlaterError as err:
                self.acks.put_back(succeeded, failed)
                log.warning("dequeue from %s failed: %s", self.reg.queue, err)
                await self._sleep_unless_stopping(backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            backoff = 0.1
            self._log_refused(result.ack_results)
            if self.stopping.is_set():
                # Handed out while we were stopping: give them straight back.
                await self._release([(j, False) for j in result.jobs])
                break
            for job in result.jobs:
                self._start(job)

    async def _finish_poll(self, poll: asyncio.Task[DequeueResult]) -> bool:
        """Waits for a Dequeue; False if a forced stop cancelled it.

        A graceful stop does not cancel a long poll: the server may be handing jobs out
        at that very moment, and a cancelled call would leave them RUNNING until their
        claim times out. Waiting costs at most poll_wait; the jobs are then released.
        """
        force_wait = asyncio.create_task(self.force.wait())
        try:
            await asyncio.wait([poll, force_wait], return_when=asyncio.FIRST_COMPLETED)
        finally:
            force_wait.cancel()
        if poll.done():
            return True
        poll.cancel()
        await asyncio.gather(poll, return_exceptions=True)
        return False

    async def _wait_for_slots(self) -> None:
        """Returns once a slot is free (or on stop), with nothing awaited after the check."""
        await self._until_free(1)
        # If slots are still taken, give jobs a moment to finish (and calls in flight to
        # come back) so that one Dequeue carries several acks and asks for several jobs.
        held = len(self.running) + self.requested
        if held and self.free < self.refill_at and not self.stopping.is_set():
            try:
                await asyncio.wait_for(
                    self._until_free(self.refill_at), self.w.ack_delay.total_seconds()
                )
            except asyncio.TimeoutError:
                pass
            # Another puller may have taken the freed slots while this one waited.
            await self._until_free(1)

    async def _until_free(self, n: int) -> None:
        while self.free < n and not self.stopping.is_set():
            self.changed.clear()
            await self.changed.wait()

    async def _sleep_unless_stopping(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.stopping.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    # --- one job --------------------------------------------------------------------

    def _start(self, job: DequeuedJob) -> None:
        state = _Running(job)
        self.running[job.job_id] = state
        state.task = asyncio.create_task(self._run_job(state), name=f"runlater-job-{job.job_id}")

    async def _run_job(self, state: _Running) -> None:
        job = state.job
        heartbeat = asyncio.create_task(self._renew_claim(state))
        try:
            outcome = await self._invoke(job)
        except asyncio.CancelledError:
            # Only the shutdown cancels jobs, after releasing them.
            if not state.released:
                raise
            return
        finally:
            heartbeat.cancel()
            # Remove before anything is awaited so the slot frees at once.
            if not state.released:
                self.running.pop(job.job_id, None)
            self.changed.set()
        if state.released or state.lost:
            return
        if isinstance(outcome, Snooze):
            await self._snooze(job, outcome)
            return
        if isinstance(outcome, JobSuccess):
            self.acks.succeeded.append(outcome)
        else:
            self.acks.failed.append(outcome)
        self._schedule_flush()

    async def _invoke(self, job: DequeuedJob) -> JobSuccess | JobFailure | Snooze:
        """Runs the handler and turns its result or exception into an outcome."""
        try:
            if self.reg.is_async:
                value = await self.reg.fn(job)  # type: ignore[misc]
            else:
                loop = asyncio.get_running_loop()
                value = await loop.run_in_executor(self.pool, self.reg.fn, job)
        except RetryAfter as exc:
            return JobFailure(
                job.job_id, job.claim_token, _truncate(exc.message), retry_delay=exc.delay
            )
        except DoNotRetry as exc:
            return JobFailure(job.job_id, job.claim_token, _truncate(exc.message), no_retry=True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - any handler error is a failed attempt
            log.warning("job %s on %s failed: %r", job.job_id, job.queue, exc)
            policy = self.reg.retry_policy
            return JobFailure(
                job.job_id,
                job.claim_token,
                _truncate(f"{type(exc).__name__}: {exc}"),
                retry_delay=policy.delay(job.attempt) if policy else None,
                no_retry=bool(policy and policy.gives_up_after(job.attempt)),
            )
        if isinstance(value, Snooze):
            return value
        if value is not None and not isinstance(value, str):
            raise TypeError(
                f"handler for {job.queue!r} returned {type(value).__name__}; "
                "expected None, str or Snooze"
            )
        return JobSuccess(job.job_id, job.claim_token, _truncate(value or ""))

    async def _snooze(self, job: DequeuedJob, snooze: Snooze) -> None:
        cp = JobCheckpoint(
            job.job_id,
            job.claim_token,
            move_to_pending=True,
            run_after=utcnow() + snooze.delay,
            custom_status=_truncate(snooze.custom_status),
        )
        try:
            self._log_refused(await self.client.checkpoint(job.queue, [cp]))
        except RunlaterError as err:
            log.warning("snooze of job %s failed: %s", job.job_id, err)

    async def _renew_claim(self, state: _Running) -> None:
        """Extends the claim each time half its lifetime has passed (a heartbeat).

        The lifetime is taken from claim_expires_at at receipt; a renewal without
        extend_claim_by extends by the queue's claim timeout, i.e. the same lifetime.
        """
        job = state.job
        if job.claim_expires_at is None:
            return
        lifetime = (job.claim_expires_at - utcnow()).total_seconds()
        interval = max(0.05, lifetime / 2)
        while True:
            await asyncio.sleep(interval)
            try:
                results = await self.client.checkpoint(
                    job.queue, [JobCheckpoint(job.job_id, job.claim_token)]
                )
            except RunlaterError as err:
                log.warning("claim renewal of job %s failed: %s", job.job_id, err)
                continue
            if results and results[0].outcome != Outcome.ACKNOWLEDGED:
                log.warning("claim of job %s lost (%s)", job.job_id, results[0].outcome.name)
                state.lost = True
                return

    # --- acks -----------------------------------------------------------------------

    def _schedule_flush(self) -> None:
        if self.flush_task is None or self.flush_task.done():
            self.flush_task = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        # If the dequeue loop wakes first it takes the acks along; else send them alone.
        await asyncio.sleep(self.w.ack_delay.total_seconds())
        await self.flush_acks()

    async def final_flush(self) -> None:
        """At shutdown: let a timer's Ack in flight land, then send whatever is left."""
        if self.flush_task is not None:
            await asyncio.gather(self.flush_task, return_exceptions=True)
        await self.flush_acks()

    async def flush_acks(self) -> None:
        if not self.acks:
            return
        succeeded, failed = self.acks.take()
        try:
            results = await self.client.ack(self.reg.queue, succeeded=succeeded, failed=failed)
        except RunlaterError as err:
            log.warning("ack on %s failed, will retry: %s", self.reg.queue, err)
            self.acks.put_back(succeeded, failed)
            if not self.stopping.is_set():
                self._schedule_flush()
            return
        self._log_refused(results)

    def _log_refused(self, results: list[JobOutcome]) -> None:
        for r in results:
            resent = r.job_id in self.acks.resent
            self.acks.resent.discard(r.job_id)
            if r.outcome == Outcome.ACKNOWLEDGED:
                continue
            if resent and r.outcome == Outcome.STALE_CLAIM:
                log.debug("job %s: re-sent ack was already applied", r.job_id)
            else:
                log.warning("job %s: %s (claim expired or job gone)", r.job_id, r.outcome.name)

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
        await self._release([(s.job, s.lost) for s in left])
        await asyncio.gather(*(s.task for s in left if s.task), return_exceptions=True)
        self.running.clear()

    async def _release(self, jobs: list[tuple[DequeuedJob, bool]]) -> None:
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
        try:
            self._log_refused(await self.client.checkpoint(self.reg.queue, cps))
        except RunlaterError as err:
            log.warning("release of %d job(s) failed: %s", len(cps), err)
