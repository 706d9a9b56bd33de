"""The public Worker: handler registration, the run loop, stop and the graceful drain."""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .._convert import utcnow
from .._errors import RunlaterError
from .._transport import Options, make_options
from ..async_client import AsyncClient
from ..client import Client
from ..retry import RetryPolicy
from . import _defaults as defaults
from ._outcome import Handler
from ._runner import QueueRunner, Registration

if TYPE_CHECKING:
    from .._task import Task

log = logging.getLogger("runlater.worker")

DequeueMode = Literal["stream", "poll"]

_H = TypeVar("_H", bound=Handler)


class Worker:
    """Registers handlers per queue and runs them until stopped.

    Args:
        client: a Client or AsyncClient, or a server URL. From a Client or a URL the worker
            makes its own AsyncClient (same settings), over HTTP/2 unless the Client names
            an http_version or dequeue_mode is "poll".
        concurrency: jobs run at once per queue (a handler may set its own); default 100.
            Plain-function handlers run on up to that many threads per queue, started as
            jobs need them; `async def` handlers run as tasks on the worker's event loop.
        dequeue_mode: "stream": one DequeueStream per queue carries jobs and acks (needs
            HTTP/2 with Connect or gRPC); "poll": Dequeue calls with the acks piggy-backed.
            None (default): "stream" wherever the client can stream, else "poll".
        batch_size: most jobs asked for in one Dequeue (default: the concurrency). A batch
            of half the concurrency or less keeps several Dequeue calls in flight (up to
            concurrency // batch_size, at most 4), each asking only for free slots. Stream
            mode grants credits once half a batch of slots is free.
        poll_wait: poll mode: long-poll time of each Dequeue when nothing is due (at most
            60 s); default 20 s. A stop cuts a long poll short.
        retry_policy: delay for failures that do not say (None: the queue's policy decides).
        shutdown_grace: how long in-flight jobs may finish after a stop before they are
            released back to PENDING; default 25 s.
        ack_delay: longest time a finished job's outcome waits to share a message with
            others; default 5 ms.
        worker_id: free text naming this worker in server logs.
        clock: the wall clock (an aware datetime) the worker reads the server's claim
            expiries against and computes snooze due times with; default the system's.
            Renewals are timed on the event loop's monotonic clock whatever it says.
            Tests against a server on a manual clock pass that clock here.
        token, tls_ca, tls_cert, tls_key: for a worker given a URL, as for Client (with the
            same environment defaults); a Client or AsyncClient brings its own.

    The defaults are the same in the TypeScript and Java SDKs (docs/workers.md).
    """

    def __init__(
        self,
        client: Client | AsyncClient | str,
        *,
        concurrency: int = defaults.CONCURRENCY,
        batch_size: int | None = None,
        poll_wait: timedelta = defaults.POLL_WAIT,
        retry_policy: RetryPolicy | None = None,
        shutdown_grace: timedelta = defaults.SHUTDOWN_GRACE,
        ack_delay: timedelta = defaults.ACK_DELAY,
        worker_id: str | None = None,
        dequeue_mode: DequeueMode | None = None,
        clock: Callable[[], datetime] = utcnow,
        token: str | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if dequeue_mode not in (None, "stream", "poll"):
            raise ValueError(f'dequeue_mode must be "stream", "poll" or None, not {dequeue_mode!r}')
        self._client_arg = client
        if not isinstance(client, str) and (token, tls_ca, tls_cert, tls_key) != (None,) * 4:
            raise ValueError(
                "token, tls_ca, tls_cert and tls_key are for a Worker given a URL; "
                f"pass them to the {type(client).__name__} instead"
            )
        target = (
            make_options(client, token=token, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key)
            if isinstance(client, str)
            else client
        )
        self._options, self._owns_client = _connection(target, dequeue_mode)
        streams = self._options.streams
        if dequeue_mode == "stream" and not streams:
            o = self._options
            raise ValueError(
                'dequeue_mode="stream" needs a client over HTTP/2 with protocol "connect" or '
                f'"grpc"; this one uses {o.protocol!r} over HTTP/{"2" if o.http2 else "1.1"}. '
                'Pass http_version="2" to the client, or dequeue_mode="poll"'
            )
        self.dequeue_mode: DequeueMode = dequeue_mode or ("stream" if streams else "poll")
        self.concurrency = concurrency
        self.batch_size = batch_size
        self.poll_wait = poll_wait
        self.retry_policy = retry_policy
        self.shutdown_grace = shutdown_grace
        self.ack_delay = ack_delay
        self.worker_id = worker_id or f"py-{socket.gethostname()}-{os.getpid()}"
        self.clock = clock
        self._registrations: dict[str, Registration] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self._force: asyncio.Event | None = None
        # A stop() that came before run_async had its loop ("graceful" or "force"): it used
        # to be dropped, so a worker started on a thread and stopped at once ran on.
        self._stop_lock = threading.Lock()
        self._early_stop: str | None = None
        self.abandoned_threads = 0
        # Set while the worker takes jobs (after its start-up check); for readiness probes.
        self.running = threading.Event()

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
        self._registrations[queue] = Registration(
            queue=queue,
            fn=fn,
            is_async=inspect.iscoroutinefunction(fn),
            concurrency=concurrency or self.concurrency,
            retry_policy=retry_policy or self.retry_policy,
        )

    def register_task(
        self,
        task: Task[..., Any],
        *,
        concurrency: int | None = None,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        """Runs a task (`runlater.task`) for the jobs of its queue: its function is called
        with the job's JSON arguments, and what it returns or raises decides the job's fate
        as a handler's would. Its annotations must resolve by now (TypeError if not)."""
        self.register(
            task.queue, task.handler(), concurrency=concurrency, retry_policy=retry_policy
        )

    @property
    def queues(self) -> list[str]:
        return list(self._registrations)

    def configure(
        self,
        *,
        url: str | None = None,
        concurrency: int | None = None,
        queues: list[str] | None = None,
    ) -> None:
        """Deployment-time overrides, as `runlater-worker --url/--concurrency/--queue` set
        them; call before run(). None leaves a setting as the app made it.

        url: the server to work against instead of the app's; protocol, HTTP version,
            timeout, headers and token are kept, and TLS settings too if both URLs are
            https:// (else an https:// URL takes them from RUNLATER_TLS_*).
        concurrency: jobs at once for every queue, the handlers' own settings included.
        queues: run only these of the registered queues (ValueError naming any other).
        """
        if url is not None:
            self._use_url(url)
        if concurrency is not None:
            if concurrency < 1:
                raise ValueError(f"concurrency must be at least 1, not {concurrency}")
            self.concurrency = concurrency
            for reg in self._registrations.values():
                reg.concurrency = concurrency
        if queues is not None:
            if not queues:
                raise ValueError("queues must name at least one queue")
            unknown = [q for q in queues if q not in self._registrations]
            if unknown:
                raise ValueError(
                    f"no handler registered for queue(s) {', '.join(map(repr, unknown))}; "
                    f"registered: {', '.join(map(repr, self._registrations)) or 'none'}"
                )
            self._registrations = {q: self._registrations[q] for q in dict.fromkeys(queues)}

    def _use_url(self, url: str) -> None:
        if not url.lower().startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, not {url!r}")
        old = self._options
        options = make_options(
            url,
            protocol=old.protocol,
            timeout=old.timeout,
            headers=old.headers,
            http_version=old.http_version,
            token=old.token or "",
        )
        if options.https and old.tls is not None:
            options = replace(options, tls=old.tls)
        self._client_arg = url
        self._options, self._owns_client = options, True

    # --- running --------------------------------------------------------------------

    def run(self, *, handle_signals: bool = True) -> None:
        """Runs until stop() or SIGTERM/SIGINT; blocks. A second signal skips the grace."""
        asyncio.run(self.run_async(handle_signals=handle_signals))

    def stop(self, *, force: bool = False) -> None:
        """Asks the worker to shut down gracefully. Safe from any thread or signal handler.

        Called before run() has set itself up (a worker just started on a thread), it
        makes that run return as soon as it starts, without taking a job."""
        with self._stop_lock:
            loop, stopping, forced = self._loop, self._stopping, self._force
            if loop is None or stopping is None or forced is None:
                # Not running yet: the next run_async stops as soon as it starts.
                self._early_stop = "force" if force or self._early_stop is not None else "graceful"
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
        """The worker's main coroutine: returns after a graceful shutdown.

        It first checks that every registered queue exists, and raises (a NotFoundError
        for a missing queue, an UnavailableError for a server that is not there, naming
        the queue and the server) before taking any job if not. Once started, a server
        that goes away is retried with backoff and logged at WARNING.
        """
        if not self._registrations:
            raise RuntimeError("no handlers registered")
        self._stopping = asyncio.Event()
        self._force = asyncio.Event()
        with self._stop_lock:
            self._loop = asyncio.get_running_loop()  # last: stop() works once this is set
            early, self._early_stop = self._early_stop, None
        if early is not None:
            self._stopping.set()
            if early == "force":
                self._force.set()
        client, owned = self._async_client()
        try:
            await self._check_queues(client)
        except BaseException:
            if owned:
                await client.close()
            raise
        if handle_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._loop.add_signal_handler(sig, self.stop)
        runners = [
            QueueRunner(self, reg, client, self._stopping, self._force)
            for reg in self._registrations.values()
        ]
        log.info(
            "worker %s started on %s at %s (%s mode)",
            self.worker_id,
            ", ".join(self.queues),
            self._options.url,
            self.dequeue_mode,
        )
        loops = [asyncio.create_task(r.pull(), name=f"runlater-{r.reg.queue}") for r in runners]
        self.running.set()
        try:
            stop_wait = asyncio.create_task(self._stopping.wait())
            # A poll loop only ends early on a bug; stop everything then too.
            await asyncio.wait([stop_wait, *loops], return_when=asyncio.FIRST_COMPLETED)
            self._stopping.set()
            await asyncio.gather(*loops, return_exceptions=True)
            await self._drain(runners)
        finally:
            self.running.clear()
            if handle_signals:
                for sig in (signal.SIGTERM, signal.SIGINT):
                    self._loop.remove_signal_handler(sig)
            await asyncio.gather(*(r.close() for r in runners), return_exceptions=True)
            if owned:
                await client.close()
            for t in loops:
                if t.done() and not t.cancelled() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
        log.info("worker %s stopped", self.worker_id)

    async def _check_queues(self, client: AsyncClient) -> None:
        """Fails fast, naming the queue and the server, if a queue is missing or the
        server is not there."""
        for queue in self._registrations:
            try:
                await client.get_queue(queue)
            except RunlaterError as err:
                err.message = (
                    f'worker cannot start on queue "{queue}" at {self._options.url}: {err.message}'
                )
                err.args = (f"[{err.code}] {err.message}",)
                raise

    def _async_client(self) -> tuple[AsyncClient, bool]:
        """The client the worker calls with, and whether it is ours to close."""
        if not self._owns_client:
            assert isinstance(self._client_arg, AsyncClient)
            return self._client_arg, False
        return AsyncClient._from_options(self._options), True

    async def _drain(self, runners: list[QueueRunner]) -> None:
        """Lets in-flight jobs finish within the grace, releases the rest, flushes acks."""
        running = sum(len(r.running) for r in runners)
        if running:
            log.info("waiting up to %s for %d running job(s)", self.shutdown_grace, running)
            deadline = asyncio.get_running_loop().time() + self.shutdown_grace.total_seconds()
            await asyncio.gather(*(r.until_idle(deadline) for r in runners))
        await asyncio.gather(*(runner.release_all() for runner in runners))
        await asyncio.gather(*(runner.acks.final_flush() for runner in runners))
        self.abandoned_threads = sum(r.abandoned_threads for r in runners)


def _connection(
    client: Client | AsyncClient | Options, mode: DequeueMode | None
) -> tuple[Options, bool]:
    """The settings the worker's calls go out with, and whether it makes its own AsyncClient
    with them (from a Client or a URL's options) rather than use the AsyncClient given.

    Its own connection is the worker's alone, and the runlater server speaks HTTP/2 (h2c on
    http://) on its one port: unless told otherwise, it takes HTTP/2 so that it can stream.
    """
    if isinstance(client, AsyncClient):
        return client.options, False
    options = client.options if isinstance(client, Client) else client
    if options.http_version is None and options.protocol != "grpc-web" and mode != "poll":
        options = replace(options, http_version="2")
    return options, True
