"""Handler control flow, the same vocabulary in the TypeScript, Python and Java SDKs.

- return normally       -> success (a returned str becomes the job's custom status)
- raise any exception   -> failed attempt (the worker's retry policy, else the queue's)
- raise RetryAfter(d)   -> failed attempt, retried after d
- raise DoNotRetry(msg) -> failed for good (no_retry)
- return Snooze(d)      -> back to PENDING, due in d, no attempt charged
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta


class RetryAfter(Exception):
    """Fail this attempt and retry after `delay` (if attempts are left)."""

    def __init__(self, delay: timedelta, message: str = "") -> None:
        super().__init__(message)
        self.delay = delay
        self.message = message


class DoNotRetry(Exception):
    """Fail the job for good, whatever attempts are left."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Snooze:
    """Put the job back to PENDING, due again after `delay`, without charging an attempt."""

    delay: timedelta
    custom_status: str = ""
