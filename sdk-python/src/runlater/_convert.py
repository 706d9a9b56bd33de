"""Conversions between the SDK's plain types and the generated protobuf messages.

Kept apart from the clients so the sync and async clients share every request builder
and response parser and differ only in how they call.

Request builders refuse values the wire cannot carry (a priority of -1, a str where bytes
go, a timedelta past protobuf's 10,000 years) with an InvalidArgumentError that names the
request field, as the server names it, and its bounds: never a bare protobuf error
(_validate.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import fields
from datetime import datetime, timedelta, timezone

from google.protobuf import duration_pb2, field_mask_pb2, timestamp_pb2

from . import _tracing as tracing
from ._body import encode_body
from ._gen.v1 import (
    job_pb2,
    job_service_pb2,
    queue_service_pb2,
    worker_service_pb2,
    workflow_service_pb2,
)
from ._types import (
    DequeuedJob,
    DequeueResult,
    Job,
    JobCheckpoint,
    JobFailure,
    JobOutcome,
    JobSpec,
    JobState,
    JobSuccess,
    Outcome,
    Queue,
    QueueConfig,
    QueueRetryPolicy,
    QueueStats,
)
from ._validate import add, invalid, new, set_field
from .control import MAX_DELAY
from .workflows import WorkflowContext, WorkflowEvent

# --- scalars ---------------------------------------------------------------------------


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def to_timestamp(value: datetime | timedelta, field: str) -> timestamp_pb2.Timestamp:
    """A datetime (naive means UTC) or a delay from now, as a Timestamp."""
    if isinstance(value, timedelta):
        try:
            value = utcnow() + value
        except OverflowError:
            raise invalid(
                field, f"{field} is now + {value}: past the last date Python has (9999-12-31)"
            ) from None
    elif not isinstance(value, datetime):
        raise invalid(
            field, f"{field} must be a datetime or a timedelta, not {type(value).__name__}"
        )
    elif value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(value)
    return ts


def from_timestamp(ts: timestamp_pb2.Timestamp) -> datetime:
    value: datetime = ts.ToDatetime(tzinfo=timezone.utc)
    return value


def to_duration(value: timedelta, field: str) -> duration_pb2.Duration:
    if not isinstance(value, timedelta):
        raise invalid(field, f"{field} must be a timedelta, not {type(value).__name__} {value!r}")
    if abs(value) > MAX_DELAY:
        seconds = f"{MAX_DELAY.total_seconds():,.0f}"
        raise invalid(
            field,
            f"{field} is {value.total_seconds():,.0f} s; protobuf durations reach "
            f"{seconds} s (10,000 years) at most",
        )
    d = duration_pb2.Duration()
    d.FromTimedelta(value)
    return d


def from_duration(d: duration_pb2.Duration) -> timedelta:
    value: timedelta = d.ToTimedelta()
    return value


def _opt_ts(msg: object, name: str) -> datetime | None:
    # Unset Timestamp fields mean "none" (e.g. claim_expires_at of a pending job).
    if not msg.HasField(name):  # type: ignore[attr-defined]
        return None
    return from_timestamp(getattr(msg, name))


# --- jobs -------------------------------------------------------------------------------


def job_spec_to_proto(spec: JobSpec, index: int, active_traceparent: str = "") -> job_pb2.JobSpec:
    prefix = f"jobs[{index}]."
    msg = new(
        job_pb2.JobSpec,
        prefix,
        queue=spec.queue,
        body=encode_body(spec.body, prefix + "body"),
        priority=spec.priority,
        attempts_allowed=spec.attempts_allowed,
        idempotency_key=spec.idempotency_key,
        custom_status=spec.custom_status,
        ordering_key=spec.ordering_key,
        traceparent=active_traceparent if spec.traceparent is None else spec.traceparent,
    )
    if spec.run_after is not None:
        msg.run_after.CopyFrom(to_timestamp(spec.run_after, prefix + "run_after"))
    return msg


def get_jobs_request(job_ids: Sequence[str], include_body: bool) -> job_service_pb2.GetJobsRequest:
    return new(job_service_pb2.GetJobsRequest, job_ids=list(job_ids), include_body=include_body)


def enqueue_request(specs: Iterable[JobSpec]) -> job_service_pb2.EnqueueRequest:
    """The request, with the caller's active span as the traceparent of every job that
    does not name its own (call it in the caller's context: it reads the active span)."""
    active = tracing.active_traceparent()
    return job_service_pb2.EnqueueRequest(
        jobs=[job_spec_to_proto(s, i, active) for i, s in enumerate(specs)]
    )


def job_from_proto(msg: job_pb2.Job) -> Job:
    return Job(
        job_id=msg.job_id,
        queue=msg.queue,
        state=_job_state(msg.state),
        priority=msg.priority,
        body=msg.body,
        run_after=_opt_ts(msg, "run_after"),
        attempts_allowed=msg.attempts_allowed,
        attempts_remaining=msg.attempts_remaining,
        custom_status=msg.custom_status,
        created_at=_opt_ts(msg, "created_at"),
        updated_at=_opt_ts(msg, "updated_at"),
        claim_expires_at=_opt_ts(msg, "claim_expires_at"),
        finished_at=_opt_ts(msg, "finished_at"),
        ordering_key=msg.ordering_key,
        traceparent=msg.traceparent,
    )


def _job_state(value: int) -> JobState:
    try:
        return JobState(value)
    except ValueError:  # a state newer than this SDK
        return JobState.UNSPECIFIED


def state_to_proto(state: JobState | None) -> str:
    # The enum value's proto name, which every generated constructor accepts.
    if state is not None and not isinstance(state, JobState):
        raise invalid("state", f"state must be a JobState or None, not {state!r}")
    return job_pb2.JobState.Name(int(state or JobState.UNSPECIFIED))


# --- worker -----------------------------------------------------------------------------


def event_from_proto(e: workflow_service_pb2.WorkflowEvent) -> WorkflowEvent:
    return WorkflowEvent(
        event_id=e.event_id,
        input=e.input,
        from_job=e.from_job,
        from_run=e.from_run,
        custom_status=e.custom_status,
        result=e.result,
        posted_at=_opt_ts(e, "posted_at"),
    )


def context_from_proto(c: workflow_service_pb2.WorkflowContext) -> WorkflowContext:
    return WorkflowContext(
        workflow=c.workflow,
        version=c.version,
        instance_id=c.instance_id,
        job=c.job,
        run=c.run,
        triggered_by=tuple(event_from_proto(e) for e in c.triggered_by),
    )


def dequeued_job_from_proto(queue: str, msg: worker_service_pb2.DequeuedJob) -> DequeuedJob:
    return DequeuedJob(
        queue=queue,
        job_id=msg.job_id,
        body=msg.body,
        priority=msg.priority,
        attempt=msg.attempt,
        attempts_allowed=msg.attempts_allowed,
        claim_token=msg.claim_token,
        claim_expires_at=_opt_ts(msg, "claim_expires_at"),
        created_at=_opt_ts(msg, "created_at"),
        custom_status=msg.custom_status,
        workflow=context_from_proto(msg.workflow) if msg.HasField("workflow") else None,
        traceparent=msg.traceparent,
    )


def ack_request(
    queue: str, succeeded: Sequence[JobSuccess], failed: Sequence[JobFailure]
) -> worker_service_pb2.AckRequest:
    req = new(worker_service_pb2.AckRequest, queue=queue)
    for i, s in enumerate(succeeded):
        add(
            req.succeeded,
            worker_service_pb2.JobSuccess,
            f"succeeded[{i}].",
            job_id=s.job_id,
            claim_token=s.claim_token,
            custom_status=s.custom_status,
            result=s.result,
            no_events=s.no_events,
        )
    for i, f in enumerate(failed):
        entry = add(
            req.failed,
            worker_service_pb2.JobFailure,
            f"failed[{i}].",
            job_id=f.job_id,
            claim_token=f.claim_token,
            custom_status=f.custom_status,
            no_retry=f.no_retry,
        )
        if f.retry_delay is not None:
            entry.retry_delay.CopyFrom(to_duration(f.retry_delay, f"failed[{i}].retry_delay"))
    return req


def outcomes_from_proto(results: Iterable[worker_service_pb2.JobOutcome]) -> list[JobOutcome]:
    out = []
    for r in results:
        try:
            outcome = Outcome(r.outcome)
        except ValueError:
            outcome = Outcome.UNSPECIFIED
        out.append(JobOutcome(job_id=r.job_id, outcome=outcome))
    return out


def dequeue_request(
    queue: str,
    limit: int,
    wait: timedelta | None,
    worker_id: str,
    succeeded: Sequence[JobSuccess],
    failed: Sequence[JobFailure],
    dry_run: bool,
) -> worker_service_pb2.DequeueRequest:
    req = new(
        worker_service_pb2.DequeueRequest,
        queue=queue,
        limit=limit,
        worker_id=worker_id,
        dry_run=dry_run,
    )
    if wait is not None and wait > timedelta(0):
        req.wait.CopyFrom(to_duration(wait, "wait"))
    if succeeded or failed:
        # The piggy-backed ack's queue may stay empty: the server uses this request's.
        req.ack.CopyFrom(ack_request("", succeeded, failed))
    return req


def dequeue_result(queue: str, resp: worker_service_pb2.DequeueResponse) -> DequeueResult:
    return DequeueResult(
        jobs=[dequeued_job_from_proto(queue, j) for j in resp.jobs],
        ack_results=outcomes_from_proto(resp.ack.results) if resp.HasField("ack") else [],
    )


def checkpoint_request(
    queue: str, checkpoints: Sequence[JobCheckpoint]
) -> worker_service_pb2.CheckpointRequest:
    req = new(worker_service_pb2.CheckpointRequest, queue=queue)
    for i, c in enumerate(checkpoints):
        prefix = f"checkpoints[{i}]."
        entry = add(
            req.checkpoints,
            worker_service_pb2.JobCheckpoint,
            prefix,
            job_id=c.job_id,
            claim_token=c.claim_token,
            move_to_pending=c.move_to_pending,
            attempts_allowed=c.attempts_allowed,
            custom_status=c.custom_status,
        )
        if c.extend_claim_by is not None:
            entry.extend_claim_by.CopyFrom(
                to_duration(c.extend_claim_by, prefix + "extend_claim_by")
            )
        if c.new_body is not None:
            set_field(entry, prefix, "new_body", c.new_body)
        if c.run_after is not None:
            entry.run_after.CopyFrom(to_timestamp(c.run_after, prefix + "run_after"))
    return req


# --- queues -----------------------------------------------------------------------------


def queue_config_to_proto(config: QueueConfig) -> tuple[queue_service_pb2.QueueConfig, list[str]]:
    """The config message and the names of the fields that were set (the update mask)."""
    msg = queue_service_pb2.QueueConfig()
    mask: list[str] = []
    for f in fields(config):
        value = getattr(config, f.name)
        if value is None:
            continue
        mask.append(f.name)
        path = f"config.{f.name}"
        if f.name == "retry_policy":
            if not isinstance(value, QueueRetryPolicy):
                raise invalid(
                    path, f"{path} must be a QueueRetryPolicy, not {type(value).__name__}"
                )
            _retry_policy_to_proto(value, msg.retry_policy)
        elif msg.DESCRIPTOR.fields_by_name[f.name].message_type is not None:  # a Duration
            getattr(msg, f.name).CopyFrom(to_duration(value, path))
        else:
            set_field(msg, "config.", f.name, value)
    return msg, mask


def _retry_policy_to_proto(policy: QueueRetryPolicy, msg: queue_service_pb2.RetryPolicy) -> None:
    msg.SetInParent()
    prefix = "config.retry_policy."
    if policy.initial_delay is not None:
        msg.initial_delay.CopyFrom(to_duration(policy.initial_delay, prefix + "initial_delay"))
    if policy.linear_steps is not None:
        set_field(msg, prefix, "linear_steps", policy.linear_steps)
    if policy.max_delay is not None:
        msg.max_delay.CopyFrom(to_duration(policy.max_delay, prefix + "max_delay"))


def update_queue_request(name: str, config: QueueConfig) -> queue_service_pb2.UpdateQueueRequest:
    msg, mask = queue_config_to_proto(config)
    return new(
        queue_service_pb2.UpdateQueueRequest,
        name=name,
        config=msg,
        update_mask=field_mask_pb2.FieldMask(paths=mask),
    )


def queue_from_proto(msg: queue_service_pb2.Queue) -> Queue:
    c = msg.config
    rp = c.retry_policy
    s = msg.stats
    return Queue(
        name=msg.name,
        config=QueueConfig(
            priorities=c.priorities,
            claim_timeout=from_duration(c.claim_timeout),
            retry_policy=QueueRetryPolicy(
                initial_delay=from_duration(rp.initial_delay),
                linear_steps=rp.linear_steps,
                max_delay=from_duration(rp.max_delay),
            ),
            default_attempts_allowed=c.default_attempts_allowed,
            max_dequeue_per_second=c.max_dequeue_per_second,
            paused=c.paused,
            succeeded_retention=from_duration(c.succeeded_retention),
            failed_retention=from_duration(c.failed_retention),
            fifo=c.fifo,
            partitions=c.partitions,
            max_body_bytes=c.max_body_bytes,
        ),
        stats=QueueStats(
            pending=s.pending,
            scheduled=s.scheduled,
            running=s.running,
            succeeded=s.succeeded,
            failed=s.failed,
            oldest_pending_age=from_duration(s.oldest_pending_age),
        ),
    )


# --- job queries ------------------------------------------------------------------------


def scan_request(
    queue: str,
    state: JobState | None,
    priority: int,
    future: bool | None,
    body_regex: str,
    limit: int,
    page_token: str,
    include_body: bool,
) -> job_service_pb2.ScanJobsRequest:
    req = new(
        job_service_pb2.ScanJobsRequest,
        queue=queue,
        state=state_to_proto(state),
        priority=priority,
        body_regex=body_regex,
        limit=limit,
        page_token=page_token,
        include_body=include_body,
    )
    if future is not None:  # proto3 optional: unset means "every job"
        set_field(req, "", "future", future)
    return req


def count_request(
    queue: str, state: JobState | None, priority: int, future: bool | None, body_regex: str
) -> job_service_pb2.CountJobsRequest:
    req = new(
        job_service_pb2.CountJobsRequest,
        queue=queue,
        state=state_to_proto(state),
        priority=priority,
        body_regex=body_regex,
    )
    if future is not None:
        set_field(req, "", "future", future)
    return req


def retry_request(
    queue: str,
    priority: int,
    attempts_allowed: int,
    run_after: datetime | timedelta | None,
    limit: int,
) -> job_service_pb2.RetryFailedJobsRequest:
    req = new(
        job_service_pb2.RetryFailedJobsRequest,
        queue=queue,
        priority=priority,
        attempts_allowed=attempts_allowed,
        limit=limit,
    )
    if run_after is not None:
        req.run_after.CopyFrom(to_timestamp(run_after, "run_after"))
    return req


def delete_request(
    queue: str, state: JobState, priority: int, body_regex: str, limit: int
) -> job_service_pb2.DeleteJobsRequest:
    return new(
        job_service_pb2.DeleteJobsRequest,
        queue=queue,
        state=state_to_proto(state),
        priority=priority,
        body_regex=body_regex,
        limit=limit,
    )


def create_queue_request(
    name: str, config: QueueConfig | None
) -> queue_service_pb2.CreateQueueRequest:
    req = new(queue_service_pb2.CreateQueueRequest, name=name)
    if config is not None:
        msg, _ = queue_config_to_proto(config)
        req.config.CopyFrom(msg)
    return req


def delete_queue_request(name: str) -> queue_service_pb2.DeleteQueueRequest:
    return new(queue_service_pb2.DeleteQueueRequest, name=name)


def list_queues_request() -> queue_service_pb2.ListQueuesRequest:
    return queue_service_pb2.ListQueuesRequest()


def get_queue_request(name: str) -> queue_service_pb2.GetQueueRequest:
    return new(queue_service_pb2.GetQueueRequest, name=name)
