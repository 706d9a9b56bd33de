"""Plain Python types at the SDK's edges: no protobuf messages leak to users.

Times are timezone-aware UTC datetimes, durations are timedeltas, bodies are bytes.
Enums mirror the proto enums by value (test_types checks that they stay exhaustive).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ._body import Body, decode_json, decode_text
from ._gen.v1 import job_pb2, worker_service_pb2
from .workflows import WorkflowContext


class JobState(enum.IntEnum):
    """State of a job as users see it (runlater.v1.JobState)."""

    UNSPECIFIED = job_pb2.JOB_STATE_UNSPECIFIED
    PENDING = job_pb2.JOB_STATE_PENDING
    RUNNING = job_pb2.JOB_STATE_RUNNING
    SUCCEEDED = job_pb2.JOB_STATE_SUCCEEDED
    FAILED = job_pb2.JOB_STATE_FAILED


class Outcome(enum.IntEnum):
    """What an Ack or Checkpoint did to one job (runlater.v1.Outcome)."""

    UNSPECIFIED = worker_service_pb2.OUTCOME_UNSPECIFIED
    ACKNOWLEDGED = worker_service_pb2.OUTCOME_ACKNOWLEDGED
    STALE_CLAIM = worker_service_pb2.OUTCOME_STALE_CLAIM
    NOT_FOUND = worker_service_pb2.OUTCOME_NOT_FOUND


@dataclass(frozen=True)
class JobSpec:
    """One job to enqueue. Zero values take the queue's defaults."""

    queue: str
    # bytes as they are, a str as UTF-8, anything else as JSON (see Client.enqueue).
    body: Body = b""
    priority: int = 0
    # A datetime (aware; naive is read as UTC) or a delay from now.
    run_after: datetime | timedelta | None = None
    attempts_allowed: int = 0
    idempotency_key: str = ""
    custom_status: str = ""
    # Jobs of a queue with the same ordering key run one at a time, in enqueue order;
    # different keys run in parallel. Ignored on FIFO queues. At most 128 characters.
    ordering_key: str = ""
    # The W3C traceparent stored with the job, which the worker continues the trace of
    # (docs/tracing.md). None: the active OpenTelemetry span's, if any; "": none.
    traceparent: str | None = None


@dataclass(frozen=True)
class Job:
    """A job as GetJobs and ScanJobs return it."""

    job_id: str
    queue: str
    state: JobState
    priority: int
    body: bytes
    run_after: datetime | None
    attempts_allowed: int
    attempts_remaining: int
    custom_status: str
    created_at: datetime | None
    updated_at: datetime | None
    claim_expires_at: datetime | None
    finished_at: datetime | None
    # The ordering key given at enqueue; "" for none (and always on FIFO queues).
    ordering_key: str = ""
    # The W3C traceparent given at enqueue; "" for none.
    traceparent: str = ""

    def text(self) -> str:
        """The body (looked up with include_body=True) as UTF-8 text; ValueError naming
        the job if it is not."""
        return decode_text(self.body, self.job_id)

    def json(self) -> Any:
        """The body parsed as JSON (as enqueue sends a dict, a list, a number...).

        Raises ValueError naming the job and where parsing stopped if it is not JSON."""
        return decode_json(self.body, self.job_id)


@dataclass(frozen=True)
class JobPage:
    """One page of ScanJobs."""

    jobs: list[Job]
    next_page_token: str


@dataclass(frozen=True)
class GetJobsResult:
    """GetJobs: the jobs found (request order) and the ids that named none."""

    jobs: list[Job]
    not_found_job_ids: list[str]


@dataclass(frozen=True)
class DequeuedJob:
    """A job handed to a worker, with the claim that proves it holds it."""

    queue: str
    job_id: str
    body: bytes
    priority: int
    attempt: int
    attempts_allowed: int
    claim_token: str
    claim_expires_at: datetime | None
    created_at: datetime | None
    custom_status: str
    # Set when the job is a run of a workflow job: which run, and the events (upstream
    # outputs) that triggered it.
    workflow: WorkflowContext | None = None
    # The W3C traceparent given at enqueue (the worker's span continues it); "" for none.
    traceparent: str = ""

    @property
    def is_last_attempt(self) -> bool:
        """True when a failure of this attempt leaves the job FAILED."""
        return self.attempt >= self.attempts_allowed

    def text(self) -> str:
        """The body as UTF-8 text; ValueError naming the job if it is not."""
        return decode_text(self.body, self.job_id)

    def json(self) -> Any:
        """The body parsed as JSON (as enqueue sends a dict, a list, a number...).

        Raises ValueError naming the job and where parsing stopped if it is not JSON."""
        return decode_json(self.body, self.job_id)


@dataclass(frozen=True)
class JobSuccess:
    """Ack entry: the job ran to completion. `result` (at most 4 KiB) and `no_events`
    are a workflow job's output; other jobs ignore them."""

    job_id: str
    claim_token: str
    custom_status: str = ""
    result: bytes = b""
    no_events: bool = False


@dataclass(frozen=True)
class JobFailure:
    """Ack entry: the attempt failed. No retry_delay lets the queue's policy decide."""

    job_id: str
    claim_token: str
    custom_status: str = ""
    retry_delay: timedelta | None = None
    no_retry: bool = False


@dataclass(frozen=True)
class JobCheckpoint:
    """A change to one running job. With only the ids it renews the claim."""

    job_id: str
    claim_token: str
    extend_claim_by: timedelta | None = None
    new_body: bytes | None = None
    move_to_pending: bool = False
    # With move_to_pending: when the job is due again (a datetime or a delay from now).
    run_after: datetime | timedelta | None = None
    attempts_allowed: int = 0
    custom_status: str = ""


@dataclass(frozen=True)
class JobOutcome:
    """The outcome of one Ack or Checkpoint entry."""

    job_id: str
    outcome: Outcome


@dataclass(frozen=True)
class DequeueResult:
    """Dequeue: the jobs handed out and the outcomes of the piggy-backed ack."""

    jobs: list[DequeuedJob]
    ack_results: list[JobOutcome] = field(default_factory=list)


@dataclass(frozen=True)
class QueueRetryPolicy:
    """A queue's server-side retry policy (runlater.v1.RetryPolicy).

    delay(n) = initial_delay * n for n <= linear_steps, then doubles, capped at max_delay.
    None fields take the server defaults (5 s, 5 steps, 1 h).
    """

    initial_delay: timedelta | None = None
    linear_steps: int | None = None
    max_delay: timedelta | None = None


@dataclass(frozen=True)
class QueueConfig:
    """A queue's settings. None means "not set": the default on create, unchanged on update.

    Queues returned by the server have every field filled in.
    """

    priorities: int | None = None
    claim_timeout: timedelta | None = None
    retry_policy: QueueRetryPolicy | None = None
    default_attempts_allowed: int | None = None
    max_dequeue_per_second: float | None = None
    paused: bool | None = None
    succeeded_retention: timedelta | None = None
    failed_retention: timedelta | None = None
    fifo: bool | None = None
    partitions: int | None = None
    max_body_bytes: int | None = None


@dataclass(frozen=True)
class QueueStats:
    """A queue's live counts."""

    pending: int
    scheduled: int
    running: int
    succeeded: int
    failed: int
    oldest_pending_age: timedelta


@dataclass(frozen=True)
class Queue:
    """A queue with its config (defaults filled in) and live stats."""

    name: str
    config: QueueConfig
    stats: QueueStats
