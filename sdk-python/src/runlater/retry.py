"""Worker-side retry policies: how long to wait before retrying a job whose handler raised.

A Worker without a policy sends failures with no retry_delay, so the queue's own
RetryPolicy decides (the usual choice). A policy here overrides the delay per attempt
and may cap the number of retries (the failure then carries no_retry).

    from runlater import retry
    Worker(client, retry_policy=retry.exponential(timedelta(seconds=1), max_delay=timedelta(minutes=5)))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from .control import Delay, as_delay

# attempt number that failed (1 = the first attempt) -> delay before the next one, as a
# timedelta or a number of seconds
DelayFn = Callable[[int], Delay]


@dataclass(frozen=True)
class RetryPolicy:
    """A delay function plus an optional cap on retries.

    max_retries: after attempt max_retries + 1 fails, the job is not retried (no_retry),
    whatever attempts the server would still allow. None leaves that to the server.
    """

    delay_fn: DelayFn
    max_retries: int | None = None

    def delay(self, attempt: int) -> timedelta:
        """Delay before the attempt after `attempt` (1-based); negative means none."""
        return as_delay(self.delay_fn(max(1, attempt)), "retry policy delay")

    def gives_up_after(self, attempt: int) -> bool:
        """True when a failure of `attempt` should not be retried."""
        return self.max_retries is not None and attempt > self.max_retries


def _cap(delay: timedelta, max_delay: timedelta | None) -> timedelta:
    return delay if max_delay is None else min(delay, max_delay)


def constant(delay: timedelta, *, max_retries: int | None = None) -> RetryPolicy:
    """The same delay before every retry."""
    return RetryPolicy(lambda _n: delay, max_retries)


def linear(
    initial: timedelta, *, max_delay: timedelta | None = None, max_retries: int | None = None
) -> RetryPolicy:
    """initial × n before retry n (5 s, 10 s, 15 s, ...)."""
    return RetryPolicy(lambda n: _cap(initial * n, max_delay), max_retries)


def exponential(
    initial: timedelta,
    *,
    factor: float = 2.0,
    max_delay: timedelta | None = None,
    max_retries: int | None = None,
) -> RetryPolicy:
    """initial × factor^(n-1) before retry n (1 s, 2 s, 4 s, ...)."""

    def fn(n: int) -> timedelta:
        # Cap the exponent's effect before multiplying so huge n cannot overflow timedelta.
        limit = max_delay or timedelta(days=365)
        seconds = min(initial.total_seconds() * factor ** (n - 1), limit.total_seconds())
        return _cap(timedelta(seconds=seconds), max_delay)

    return RetryPolicy(fn, max_retries)


def pinlater_default(
    initial: timedelta = timedelta(seconds=5),
    *,
    linear_steps: int = 5,
    max_delay: timedelta = timedelta(hours=1),
    max_retries: int | None = 10,
) -> RetryPolicy:
    """PinLater's production policy, the formula of runlater.v1.RetryPolicy:

        delay(n) = initial × n                                n <= linear_steps
        delay(n) = initial × linear_steps × 2^(n − linear_steps)  after that, capped

    With the defaults: 5, 10, 15, 20, 25, 50, 100, 200, 400, 800 s over 10 retries.
    """

    def fn(n: int) -> timedelta:
        if n <= linear_steps:
            return _cap(initial * n, max_delay)
        exp = min(n - linear_steps, 40)  # 2^40 × anything is past any sane cap
        return _cap(initial * linear_steps * (2**exp), max_delay)

    return RetryPolicy(fn, max_retries)
