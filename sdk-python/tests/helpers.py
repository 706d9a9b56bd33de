"""Test helpers shared by the test modules (tests/ is on sys.path via pyproject)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

import pydantic

from runlater import Worker

T = TypeVar("T")

QueueFactory = Callable[..., str]

# A poll-mode worker's long poll: short, so that stopping it does not wait out the default.
SHORT_POLL = timedelta(milliseconds=500)

# Worker apps for the runlater-worker tests (run with this as the working directory).
APPS = Path(__file__).resolve().parent / "apps"


@dataclass
class Address:
    """A dataclass as a job body or a task's argument."""

    city: str
    zip: str


class Signup(pydantic.BaseModel):
    """A pydantic model as a job body or a task's argument."""

    email: str
    seats: int = 1


def cli_command() -> list[str]:
    """runlater-worker: the installed console script, falling back to python -m runlater."""
    script = Path(sys.executable).with_name("runlater-worker")
    return [str(script)] if script.exists() else [sys.executable, "-m", "runlater"]


def wait_for(probe: Callable[[], T | None], *, timeout: float = 10.0, interval: float = 0.02) -> T:
    """Polls probe() until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last: T | None = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout}s (last value: {last!r})")


@contextmanager
def running(worker: Worker) -> Iterator[threading.Thread]:
    """Runs a Worker in a background thread; stops it and waits for it on exit."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            worker.run(handle_signals=False)
        except BaseException as exc:  # noqa: BLE001 - surfaced in the test thread below
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    try:
        yield thread
    finally:
        wait_for(lambda: worker._loop is not None, timeout=5)  # started?
        worker.stop()
        thread.join(timeout=30)
        assert not thread.is_alive(), "worker did not stop"
        if errors:
            raise errors[0]
