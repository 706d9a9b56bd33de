"""Workflows from code (docs/workflows.md): plain types for definitions, instances and the
context a worker's job carries, and the Workflow builder.

>>> wf = (
...     Workflow("etl")
...     .job("extract", queue="etl", inputs=[External("files_ready")])
...     .job("load", queue="etl", inputs=["extract"], on_failure="continue")
... )
>>> client.apply_workflow(wf)
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from ._gen.v1 import schedule_service_pb2, workflow_service_pb2

# Largest result payload of a run or an external event (JobSuccess.result): 4 KiB.
MAX_RESULT_BYTES = 4096
_MAX_JOBS = 100
_MAX_INPUTS = 10
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def as_result(value: bytes | str | None, what: str) -> bytes:
    """A result payload as bytes (str as UTF-8); ValueError past MAX_RESULT_BYTES."""
    if value is None:
        return b""
    if isinstance(value, str):
        value = value.encode()
    if not isinstance(value, bytes):
        raise TypeError(f"{what} must be bytes or str, not {type(value).__name__}")
    if len(value) > MAX_RESULT_BYTES:
        raise ValueError(f"{what} is {len(value)} bytes; at most {MAX_RESULT_BYTES}")
    return value


class InstanceState(enum.IntEnum):
    """runlater.v1.InstanceState."""

    UNSPECIFIED = workflow_service_pb2.INSTANCE_STATE_UNSPECIFIED
    RUNNING = workflow_service_pb2.INSTANCE_STATE_RUNNING
    SUCCEEDED = workflow_service_pb2.INSTANCE_STATE_SUCCEEDED
    FAILED = workflow_service_pb2.INSTANCE_STATE_FAILED
    ABORTED = workflow_service_pb2.INSTANCE_STATE_ABORTED
    CANCELLED = workflow_service_pb2.INSTANCE_STATE_CANCELLED


class InstanceJobState(enum.IntEnum):
    """runlater.v1.InstanceJobState."""

    UNSPECIFIED = workflow_service_pb2.INSTANCE_JOB_STATE_UNSPECIFIED
    WAITING = workflow_service_pb2.INSTANCE_JOB_STATE_WAITING
    RUNNABLE = workflow_service_pb2.INSTANCE_JOB_STATE_RUNNABLE
    RUNNING = workflow_service_pb2.INSTANCE_JOB_STATE_RUNNING
    DISABLED = workflow_service_pb2.INSTANCE_JOB_STATE_DISABLED


class RunOutcome(enum.IntEnum):
    """runlater.v1.RunOutcome."""

    UNSPECIFIED = workflow_service_pb2.RUN_OUTCOME_UNSPECIFIED
    QUEUED = workflow_service_pb2.RUN_OUTCOME_QUEUED
    SUCCEEDED = workflow_service_pb2.RUN_OUTCOME_SUCCEEDED
    FAILED = workflow_service_pb2.RUN_OUTCOME_FAILED
    ABANDONED = workflow_service_pb2.RUN_OUTCOME_ABANDONED


class OverlapPolicy(enum.IntEnum):
    """runlater.v1.OverlapPolicy: what a schedule's fire does while the last one runs."""

    UNSPECIFIED = schedule_service_pb2.OVERLAP_POLICY_UNSPECIFIED
    SKIP = schedule_service_pb2.OVERLAP_POLICY_SKIP
    ALLOW = schedule_service_pb2.OVERLAP_POLICY_ALLOW
    CANCEL_PREVIOUS = schedule_service_pb2.OVERLAP_POLICY_CANCEL_PREVIOUS


class FireOutcome(enum.IntEnum):
    """runlater.v1.FireOutcome."""

    UNSPECIFIED = schedule_service_pb2.FIRE_OUTCOME_UNSPECIFIED
    STARTED = schedule_service_pb2.FIRE_OUTCOME_STARTED
    SKIPPED = schedule_service_pb2.FIRE_OUTCOME_SKIPPED
    MISSED = schedule_service_pb2.FIRE_OUTCOME_MISSED
    FAILED = schedule_service_pb2.FIRE_OUTCOME_FAILED


@dataclass(frozen=True)
class WorkflowEvent:
    """An event in an input: a run's output, or an external payload."""

    event_id: str
    input: str  # "job:<name>" or "external:<name>"
    from_job: str  # empty for an external or seed event
    from_run: int
    custom_status: str
    result: bytes
    posted_at: datetime | None

    def json(self) -> object:
        """The result payload parsed as JSON."""
        return json.loads(self.result)


@dataclass(frozen=True)
class WorkflowContext:
    """Which run of which workflow job a worker's job is (DequeuedJob.workflow)."""

    workflow: str
    version: int
    instance_id: str
    job: str
    run: int
    triggered_by: tuple[WorkflowEvent, ...]


@dataclass(frozen=True)
class JobRun:
    """One run of a job in an instance."""

    run: int
    job_id: str
    triggered_by: tuple[WorkflowEvent, ...]
    outcome: RunOutcome
    custom_status: str
    result: bytes
    queued_at: datetime | None
    ended_at: datetime | None
    #: Its triggering events' results were dropped to keep the instance within its size
    #: bound (docs/workflows.md): it can no longer be re-run.
    trimmed: bool = False


@dataclass(frozen=True)
class InstanceJob:
    """A job's state in an instance."""

    name: str
    state: InstanceJobState
    pending_events: tuple[WorkflowEvent, ...]
    runs: tuple[JobRun, ...]
    run_count: int
    dropped_events: int


@dataclass(frozen=True)
class Instance:
    """One run of a workflow."""

    instance_id: str
    workflow: str
    version: int
    state: InstanceState
    keep_open: bool
    created_at: datetime | None
    ended_at: datetime | None
    jobs: tuple[InstanceJob, ...] = ()

    @property
    def ended(self) -> bool:
        return self.state != InstanceState.RUNNING

    def job(self, name: str) -> InstanceJob:
        """The job named `name`; KeyError if the workflow has none."""
        for j in self.jobs:
            if j.name == name:
                return j
        raise KeyError(f"instance {self.instance_id} has no job {name!r}")


@dataclass(frozen=True)
class ExternalEvent:
    """An event for an external input; `result` (bytes, or str as UTF-8) at most 4 KiB."""

    input: str
    custom_status: str = ""
    result: bytes | str = b""

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "result", as_result(self.result, f"event for input {self.input!r}: result")
        )


@dataclass(frozen=True)
class External:
    """An input fed from outside (start_instance events, post_event) under `name`."""

    name: str


@dataclass(frozen=True)
class Upstream:
    """An input fed by the successful runs of job `job`; `seed` holds one event at start."""

    job: str
    seed: bool = False


Input = str | Upstream | External


@dataclass(frozen=True)
class WorkflowJob:
    name: str
    queue: str
    inputs: tuple[Input, ...] = ()
    on_failure: Literal["abort", "continue"] = "abort"
    body: bytes = b""
    priority: int = 0
    attempts_allowed: int = 0


@dataclass
class Workflow:
    """A workflow definition: ``Workflow("etl").job("a", queue="q").job(...)``.

    An input is a job's name (or ``Upstream(name, seed=True)``) or ``External(name)``;
    a job may take input from jobs added later (cycles are allowed).
    """

    name: str
    jobs: list[WorkflowJob] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"workflow name {self.name!r}: use 1 to 64 of A-Z a-z 0-9 _ . -")

    def job(
        self,
        name: str,
        *,
        queue: str,
        inputs: Sequence[Input] = (),
        on_failure: Literal["abort", "continue"] = "abort",
        body: bytes | str = b"",
        priority: int = 0,
        attempts_allowed: int = 0,
    ) -> Workflow:
        if not _NAME.fullmatch(name):
            raise ValueError(f"job name {name!r}: use 1 to 64 of A-Z a-z 0-9 _ . -")
        if any(j.name == name for j in self.jobs):
            raise ValueError(f"workflow {self.name}: job {name} is defined twice")
        if len(self.jobs) >= _MAX_JOBS:
            raise ValueError(f"workflow {self.name}: at most {_MAX_JOBS} jobs")
        if len(inputs) > _MAX_INPUTS:
            raise ValueError(
                f"workflow {self.name}: job {name} has {len(inputs)} inputs; at most {_MAX_INPUTS}"
            )
        if on_failure not in ("abort", "continue"):
            raise ValueError(f"on_failure must be 'abort' or 'continue', not {on_failure!r}")
        raw = body.encode() if isinstance(body, str) else body
        self.jobs.append(
            WorkflowJob(name, queue, tuple(inputs), on_failure, raw, priority, attempts_allowed)
        )
        return self

    def check(self) -> None:
        """ValueError if the definition has no job or an input names a job not defined."""
        if not self.jobs:
            raise ValueError(f"workflow {self.name}: define at least one job")
        names = {j.name for j in self.jobs}
        for j in self.jobs:
            for i in j.inputs:
                source = i if isinstance(i, str) else i.job if isinstance(i, Upstream) else None
                if source is not None and source not in names:
                    raise ValueError(
                        f"workflow {self.name}: job {j.name} takes input from {source}, "
                        "which is not defined"
                    )


@dataclass(frozen=True)
class ScheduleFire:
    """One line of a schedule's history (oldest first)."""

    outcome: FireOutcome
    at: datetime | None
    through: datetime | None
    fired_at: datetime | None
    started: str
    previous: str
    error: str


@dataclass(frozen=True)
class Schedule:
    """A schedule as the server answers it."""

    name: str
    cron: str
    time_zone: str
    overlap: OverlapPolicy
    paused: bool
    next_fire_at: datetime | None
    last_started: str
    fires: int
    history: tuple[ScheduleFire, ...]
    # The next fire times from next_fire_at (get_schedule: as many as asked for; lists: none).
    upcoming: tuple[datetime, ...] = ()
