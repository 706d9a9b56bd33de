"""What a handler returned or raised, turned into what the worker reports for its job.

The vocabulary (the same in the TypeScript and Java SDKs) is in control.py: returning
None or a str is a success, raising is a failed attempt (RetryAfter and DoNotRetry say
how), returning Snooze puts the job back to PENDING without charging an attempt, and
returning Success carries a workflow job's output (result payload, no_events).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from .._types import DequeuedJob, JobFailure, JobSuccess
from ..control import DoNotRetry, RetryAfter, Snooze, Success
from ..retry import RetryPolicy

log = logging.getLogger("runlater.worker")

HandlerResult = str | Snooze | Success | None
Handler = Callable[[DequeuedJob], HandlerResult | Awaitable[HandlerResult]]

# What the worker does with a finished job: ack it (success or failure) or snooze it.
Result = JobSuccess | JobFailure | Snooze

# custom_status is cut by the server past 1,000 characters in all; keep one failure short.
MAX_STATUS_CHARS = 500


def truncate(text: str) -> str:
    return text if len(text) <= MAX_STATUS_CHARS else text[: MAX_STATUS_CHARS - 1] + "…"


def result_of_value(job: DequeuedJob, value: object, policy: RetryPolicy | None) -> Result:
    """The handler returned `value`. Anything but None, a str, a Snooze or a Success is a
    mistake in the handler: it fails the attempt as if the handler had raised TypeError."""
    if isinstance(value, Snooze):
        return value
    if isinstance(value, Success):
        return JobSuccess(
            job.job_id,
            job.claim_token,
            truncate(value.custom_status),
            result=value.result,
            no_events=value.no_events,
        )
    if value is None or isinstance(value, str):
        return JobSuccess(job.job_id, job.claim_token, truncate(value or ""))
    mistake = TypeError(
        f"handler for {job.queue!r} returned {type(value).__name__}; "
        "a handler may return None, a str (the custom status), a Snooze or a Success"
    )
    return result_of_error(job, mistake, policy)


def result_of_error(job: DequeuedJob, exc: Exception, policy: RetryPolicy | None) -> JobFailure:
    """The handler raised `exc`."""
    if isinstance(exc, RetryAfter):
        return JobFailure(job.job_id, job.claim_token, truncate(exc.message), retry_delay=exc.delay)
    if isinstance(exc, DoNotRetry):
        return JobFailure(job.job_id, job.claim_token, truncate(exc.message), no_retry=True)
    # Once per failed attempt, with the handler's traceback (RetryAfter and DoNotRetry
    # above are decisions, not accidents: no need to shout).
    log.warning(
        "job %s of %s failed (attempt %d of %d)",
        job.job_id,
        job.queue,
        job.attempt,
        job.attempts_allowed,
        exc_info=exc,
    )
    # The message alone (the type's name if it has none), as in the TypeScript and Java SDKs.
    status = truncate(str(exc) or type(exc).__name__)
    if policy is None:
        return JobFailure(job.job_id, job.claim_token, status)
    try:
        delay, give_up = policy.delay(job.attempt), policy.gives_up_after(job.attempt)
    except Exception:  # a broken policy must not keep the job RUNNING
        log.exception("retry policy failed for job %s; the queue's policy decides", job.job_id)
        return JobFailure(job.job_id, job.claim_token, status)
    return JobFailure(job.job_id, job.claim_token, status, retry_delay=delay, no_retry=give_up)
