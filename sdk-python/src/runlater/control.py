"""Handler control flow, the same vocabulary in the TypeScript, Python and Java SDKs.

- return normally       -> success (a returned str becomes the job's custom status)
- raise any exception   -> failed attempt (the worker's retry policy, else the queue's)
- raise RetryAfter(d)   -> failed attempt, retried after d
- raise DoNotRetry(msg) -> failed for good (no_retry)
- return Snooze(d)      -> back to PENDING, due in d, no attempt charged
- return Success(custom_status, result=b"...", no_events=False)
                        -> success with a workflow job's output: the result payload (at
                           most 4 KiB) rides in the events posted downstream; no_events
                           posts none (how a cycle stops itself)

Delays are a timedelta or a number of seconds (int or float); a negative one means no
delay. Anything else is refused where it is written, in the constructor, so a bad delay
never reaches the worker's batched acks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import timedelta

from .workflows import as_result

# The longest delay the wire carries (google.protobuf.Duration): 10,000 years.
MAX_DELAY = timedelta(seconds=315_576_000_000)

Delay = timedelta | int | float


def as_delay(value: object, what: str) -> timedelta:
    """`value` (a timedelta, or seconds as an int or float) as a timedelta >= 0.

    Raises TypeError for other types and ValueError for NaN, infinities and delays past
    MAX_DELAY; `what` names the value in those messages.
    """
    if isinstance(value, bool) or not isinstance(value, (timedelta, int, float)):
        raise TypeError(
            f"{what} must be a timedelta or a number of seconds (int or float), "
            f"not {type(value).__name__} {value!r}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number of seconds, not {value!r}")
    if isinstance(value, timedelta):
        too_long = value > MAX_DELAY
    else:  # compared before converting: timedelta(seconds=) overflows on huge numbers
        too_long = value > MAX_DELAY.total_seconds()
    if too_long:
        raise ValueError(f"{what} of {value} is longer than {MAX_DELAY.days:,} days (10,000 years)")
    delay = value if isinstance(value, timedelta) else timedelta(seconds=max(value, 0))
    return max(delay, timedelta(0))


class RetryAfter(Exception):
    """Fail this attempt and retry after `delay` (if attempts are left).

    `delay` is a timedelta or a number of seconds: ``RetryAfter(30)``,
    ``RetryAfter(timedelta(minutes=5), "rate limited")``.
    """

    def __init__(self, delay: Delay, message: str = "") -> None:
        self._delay = as_delay(delay, "RetryAfter delay")
        super().__init__(message)
        self.message = str(message)

    @property
    def delay(self) -> timedelta:
        # Read-only: it was checked when the exception was made.
        return self._delay


class DoNotRetry(Exception):
    """Fail the job for good, whatever attempts are left."""

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = str(message)


@dataclass(frozen=True, init=False)
class Snooze:
    """Put the job back to PENDING, due again after `delay`, without charging an attempt.

    `delay` is a timedelta or a number of seconds: ``Snooze(3600)``.
    """

    delay: timedelta
    custom_status: str = ""

    def __init__(self, delay: Delay, custom_status: str = "") -> None:
        if not isinstance(custom_status, str):
            raise TypeError(
                f"Snooze custom_status must be a str, not {type(custom_status).__name__}"
            )
        object.__setattr__(self, "delay", as_delay(delay, "Snooze delay"))
        object.__setattr__(self, "custom_status", custom_status)


@dataclass(frozen=True, init=False)
class Success:
    """A success with a workflow job's output: ``return Success("3 files", result=b"...")``.

    `result` is bytes (or str, sent as UTF-8), at most 4 KiB: a bigger one raises
    ValueError here, in the handler, so the attempt fails naming the bound (the server
    would refuse the whole Ack). `no_events` posts nothing downstream. Jobs that are not
    workflow runs keep only the custom status.
    """

    custom_status: str
    result: bytes
    no_events: bool

    def __init__(
        self, custom_status: str = "", *, result: bytes | str = b"", no_events: bool = False
    ) -> None:
        if not isinstance(custom_status, str):
            raise TypeError(
                f"Success custom_status must be a str, not {type(custom_status).__name__}"
            )
        object.__setattr__(self, "custom_status", custom_status)
        object.__setattr__(self, "result", as_result(result, "Success result"))
        object.__setattr__(self, "no_events", bool(no_events))
