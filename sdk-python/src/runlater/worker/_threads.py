"""Runs a queue's plain-function handler on threads, handing results back in batches.

asyncio's run_in_executor costs a Future pair and a wake-up of the loop (a write to its
self-pipe) per call, which for short handlers is most of the work. Here jobs go to the
handler threads through one SimpleQueue, results come back through a deque, and the
loop is woken once for whatever has piled up since it last looked. Threads are started
as jobs need them, up to the queue's concurrency, and are daemons: a handler still
running after the shutdown grace (its job released) does not hold the process.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

# What a handler call ended with: its return value, or the exception it raised.
Ended = tuple[object, BaseException | None]


class HandlerThreads(Generic[T]):
    def __init__(
        self,
        fn: Callable[[T], object],
        max_threads: int,
        name: str,
        on_done: Callable[[T, Ended], None],
    ) -> None:
        self.fn = fn
        self.max_threads = max_threads
        self.name = name
        self.on_done = on_done
        self._loop = asyncio.get_running_loop()
        self._jobs: queue.SimpleQueue[T | None] = queue.SimpleQueue()
        self._done: deque[tuple[T, Ended]] = deque()
        self._wake_pending = False
        self._threads: list[threading.Thread] = []
        self._in_flight = 0  # submitted and not yet handed back (counted on the loop)

    def submit(self, item: T) -> None:
        """Called on the loop: run fn(item) on a handler thread."""
        self._in_flight += 1
        if self._in_flight > len(self._threads) and len(self._threads) < self.max_threads:
            t = threading.Thread(
                target=self._run, name=f"{self.name}-{len(self._threads) + 1}", daemon=True
            )
            self._threads.append(t)
            t.start()
        self._jobs.put(item)

    def stop(self) -> None:
        """Lets idle threads end; threads in a handler end when it returns."""
        for _ in self._threads:
            self._jobs.put(None)

    def _run(self) -> None:
        while (item := self._jobs.get()) is not None:
            try:
                ended: Ended = (self.fn(item), None)
            except BaseException as exc:  # noqa: BLE001 - reported as the job's failure
                ended = (None, exc)
            self._done.append((item, ended))
            if not self._wake_pending:
                self._wake_pending = True
                try:
                    self._loop.call_soon_threadsafe(self._drain)
                except RuntimeError:  # the loop is closed: the worker has gone
                    return

    def _drain(self) -> None:
        # Cleared before reading, so a result appended from now on schedules another drain.
        self._wake_pending = False
        while self._done:
            item, ended = self._done.popleft()
            self._in_flight -= 1
            self.on_done(item, ended)
