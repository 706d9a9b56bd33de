"""Stream mode: one long-lived WorkerService.DequeueStream per queue instead of a Dequeue
call per batch (HTTP/2 only). The reference is sdk-ts/src/worker/stream-puller.ts.

- Credits: the worker grants the free slots not already spoken for by credits granted
  and not yet used (QueueRunner.requested, "on the way"), once half a batch of them is
  free: running jobs plus jobs on the way never exceed the concurrency.
- Acks ride with the credits, or alone when the AckBatcher's delay runs out (the
  carrier). The server answers them in order, so the unanswered ones are a FIFO; when a
  stream ends or breaks, those go back to the AckBatcher and are sent again (a repeat is
  harmless: it comes back STALE_CLAIM). A broken stream is reopened with backoff.
- Stop: the worker closes its side; the server answers the acks it has and ends the
  stream. Jobs that arrive meanwhile are released. A server that does not end the stream
  in time, or a forced stop, cuts it off.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from .. import _convert as cv
from .._errors import RunlaterError
from .._gen.v1 import worker_service_pb2 as pb
from .._types import JobFailure, JobSuccess

if TYPE_CHECKING:
    from ._runner import QueueRunner

log = logging.getLogger("runlater.worker")

# Credits granted and not yet used may not exceed this (the server's streamCreditMax).
CREDIT_MAX = 10_000
# After a stop, how long the server may take to answer the acks it has and end the stream.
STOP_TIMEOUT_S = 10.0

_Request = pb.DequeueStreamRequest


class StreamPuller:
    def __init__(self, runner: QueueRunner) -> None:
        self.r = runner
        # The open stream's outgoing messages (None closes our side); None between streams.
        self.outbox: asyncio.Queue[_Request | None] | None = None
        # Acks sent on the open stream and not yet answered, oldest first.
        self.unanswered: deque[tuple[list[JobSuccess], list[JobFailure]]] = deque()
        self.poke_scheduled = False

    async def run(self) -> None:
        """Keeps a stream open (another after an end or a break) until stop."""
        r = self.r
        r.acks.carrier = self.carry_acks
        r.on_change = self.poke
        backoff = 0.1
        try:
            while not r.stopping.is_set():
                brought, error = await self._one_stream()
                if r.stopping.is_set():
                    break
                if error is not None:
                    log.warning("dequeue stream of %s broke: %s", r.reg.queue, error)
                if brought:
                    backoff = 0.1
                if error is not None or not brought:
                    # Not reopened at once: the server may be down or refusing (no queue).
                    await r.sleep_unless_stopping(backoff)
                    backoff = min(backoff * 2, 5.0)
        finally:
            r.acks.carrier = None
            r.on_change = None

    def poke(self) -> None:
        """A job finished: send credits and acks if worth it, once per loop iteration, so
        that jobs finishing together report in one message."""
        if self.poke_scheduled or self.outbox is None:
            return
        self.poke_scheduled = True

        def send() -> None:
            self.poke_scheduled = False
            self._send(ack_due=False)

        asyncio.get_running_loop().call_soon(send)

    def carry_acks(self) -> bool:
        """The AckBatcher's delay ran out: send its acks now; False if no stream is open."""
        if self.outbox is None:
            return False
        self._send(ack_due=True)
        return True

    def _free_credit(self) -> int:
        r = self.r
        return max(0, min(r.free, CREDIT_MAX - r.requested))

    def _send(self, *, ack_due: bool) -> None:
        r = self.r
        if self.outbox is None:
            return
        credit = self._free_credit()
        if credit < r.refill_at and not ack_due and len(r.acks) < r.refill_at:
            return  # wait for a fuller message
        msg = _Request(credit=credit)
        if r.acks:
            succeeded, failed = r.acks.take()
            msg.ack.CopyFrom(cv.ack_request("", succeeded, failed))
            self.unanswered.append((succeeded, failed))
        elif credit == 0:
            return
        r.requested += credit
        self.outbox.put_nowait(msg)

    async def _one_stream(self) -> tuple[bool, RunlaterError | None]:
        """One stream from open to end: whether it brought anything, and how it broke."""
        r = self.r
        outbox: asyncio.Queue[_Request | None] = asyncio.Queue()
        credit = self._free_credit()
        first = _Request(queue=r.reg.queue, worker_id=r.w.worker_id, credit=credit)
        if r.acks:  # left over from the last stream, or finished between streams
            succeeded, failed = r.acks.take()
            first.ack.CopyFrom(cv.ack_request("", succeeded, failed))
            self.unanswered.append((succeeded, failed))
        r.requested += credit
        outbox.put_nowait(first)
        self.outbox = outbox
        reading = asyncio.create_task(self._read(outbox))
        try:
            stop_wait = asyncio.create_task(r.stopping.wait())
            await asyncio.wait([reading, stop_wait], return_when=asyncio.FIRST_COMPLETED)
            stop_wait.cancel()
            if not reading.done():
                await self._close(outbox, reading)
            if reading.cancelled():
                return False, None
            return reading.result()
        finally:
            self.outbox = None
            outbox.put_nowait(None)  # ends the request iterator if the stream broke
            r.requested = 0  # no credit of a closed stream will be used
            # Unanswered acks may or may not have been applied: send them again.
            while self.unanswered:
                r.acks.put_back(*self.unanswered.pop())

    async def _close(
        self, outbox: asyncio.Queue[_Request | None], reading: asyncio.Task[object]
    ) -> None:
        """Stop: closes our side and lets the server answer what it has, within limits."""
        r = self.r
        self.outbox = None  # from now on outcomes go by Ack calls
        outbox.put_nowait(None)
        force_wait = asyncio.create_task(r.force.wait())
        await asyncio.wait(
            [reading, force_wait], timeout=STOP_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED
        )
        force_wait.cancel()
        if not reading.done():
            if not r.force.is_set():
                log.warning("the server did not end the dequeue stream of %s in time", r.reg.queue)
            reading.cancel()
            await asyncio.gather(reading, return_exceptions=True)

    async def _read(
        self, outbox: asyncio.Queue[_Request | None]
    ) -> tuple[bool, RunlaterError | None]:
        r = self.r

        async def requests() -> AsyncIterator[_Request]:
            while (msg := await outbox.get()) is not None:
                yield msg

        brought = False
        try:
            async for res in r.client._dequeue_stream(requests()):
                brought = True
                if res.jobs:
                    r.requested -= len(res.jobs)
                    jobs = [cv.dequeued_job_from_proto(r.reg.queue, j) for j in res.jobs]
                    if r.stopping.is_set():
                        # Handed out while we were stopping: give them straight back.
                        await r.release([(j, False) for j in jobs])
                    else:
                        for job in jobs:
                            r.start(job)
                if res.HasField("ack") and self.unanswered:
                    self.unanswered.popleft()
                    r.acks.check_results(cv.outcomes_from_proto(res.ack.results))
        except RunlaterError as err:
            return brought, err
        return brought, None
