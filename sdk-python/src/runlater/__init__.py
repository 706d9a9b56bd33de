"""runlater: Python client and worker framework for the runlater job server."""

from __future__ import annotations

from ._body import Body, JsonValue
from ._errors import (
    DeadlineExceededError,
    ErrorReason,
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
    RunlaterError,
    UnavailableError,
)
from ._task import EnqueueOptions, Task, task
from ._types import (
    DequeuedJob,
    DequeueResult,
    GetJobsResult,
    Job,
    JobCheckpoint,
    JobFailure,
    JobOutcome,
    JobPage,
    JobSpec,
    JobState,
    JobSuccess,
    Outcome,
    Queue,
    QueueConfig,
    QueueRetryPolicy,
    QueueStats,
)
from .async_client import AsyncClient
from .client import Client
from .control import DoNotRetry, RetryAfter, Snooze
from .retry import RetryPolicy
from .worker import Worker

__all__ = [
    "AsyncClient",
    "Body",
    "Client",
    "DeadlineExceededError",
    "DequeueResult",
    "DequeuedJob",
    "DoNotRetry",
    "EnqueueOptions",
    "ErrorReason",
    "FailedPreconditionError",
    "GetJobsResult",
    "InvalidArgumentError",
    "Job",
    "JobCheckpoint",
    "JobFailure",
    "JobOutcome",
    "JobPage",
    "JobSpec",
    "JobState",
    "JobSuccess",
    "JsonValue",
    "NotFoundError",
    "Outcome",
    "Queue",
    "QueueConfig",
    "QueueRetryPolicy",
    "QueueStats",
    "ResourceExhaustedError",
    "RetryAfter",
    "RetryPolicy",
    "RunlaterError",
    "Snooze",
    "Task",
    "UnavailableError",
    "Worker",
    "task",
]
