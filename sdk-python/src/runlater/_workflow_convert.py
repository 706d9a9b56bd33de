"""Workflow and schedule messages <-> the plain types of workflows.py, and the waiting loop
both clients share."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta

from ._convert import _opt_ts, event_from_proto, from_timestamp, to_duration
from ._errors import DeadlineExceededError
from ._gen.v1 import schedule_service_pb2 as spb
from ._gen.v1 import workflow_service_pb2 as wpb
from ._validate import invalid, new
from .workflows import (
    External,
    ExternalEvent,
    FireOutcome,
    Instance,
    InstanceJob,
    InstanceJobState,
    InstanceState,
    JobRun,
    OverlapPolicy,
    RunOutcome,
    Schedule,
    ScheduleFire,
    Upstream,
    Workflow,
    WorkflowEvent,
    as_result,
)

_DAY = timedelta(days=1)
# The largest page ListInstances and ListSchedules hand out (docs/limits.md).
MAX_PAGE_SIZE = 1000


def workflow_to_proto(wf: Workflow) -> wpb.Workflow:
    wf.check()
    msg = wpb.Workflow(name=wf.name)
    for j in wf.jobs:
        job = msg.jobs.add(
            name=j.name,
            queue=j.queue,
            on_failure=wpb.FAILURE_POLICY_CONTINUE
            if j.on_failure == "continue"
            else wpb.FAILURE_POLICY_ABORT,
            body=j.body,
            priority=j.priority,
            attempts_allowed=j.attempts_allowed,
        )
        for i in j.inputs:
            if isinstance(i, External):
                job.inputs.add(external=i.name)
            elif isinstance(i, Upstream):
                job.inputs.add(job=i.job, seed=i.seed)
            else:
                job.inputs.add(job=i)
    return msg


def events_to_proto(events: Iterable[ExternalEvent]) -> list[wpb.ExternalEvent]:
    return [
        wpb.ExternalEvent(
            input=e.input, custom_status=e.custom_status, result=as_result(e.result, "result")
        )
        for e in events
    ]


def _events(es: Sequence[wpb.WorkflowEvent]) -> tuple[WorkflowEvent, ...]:
    return tuple(event_from_proto(e) for e in es)


def instance_from_proto(i: wpb.Instance) -> Instance:
    return Instance(
        instance_id=i.instance_id,
        workflow=i.workflow,
        version=i.version,
        state=InstanceState(i.state),
        keep_open=i.keep_open,
        created_at=_opt_ts(i, "created_at"),
        ended_at=_opt_ts(i, "ended_at"),
        jobs=tuple(
            InstanceJob(
                name=j.name,
                state=InstanceJobState(j.state),
                pending_events=_events(j.pending_events),
                runs=tuple(
                    JobRun(
                        run=r.run,
                        job_id=r.job_id,
                        triggered_by=_events(r.triggered_by),
                        outcome=RunOutcome(r.outcome),
                        custom_status=r.custom_status,
                        result=r.result,
                        queued_at=_opt_ts(r, "queued_at"),
                        ended_at=_opt_ts(r, "ended_at"),
                        trimmed=r.trimmed,
                    )
                    for r in j.runs
                ),
                run_count=j.run_count,
                dropped_events=j.dropped_events,
            )
            for j in i.jobs
        ),
    )


def schedule_to_proto(
    name: str,
    cron: str,
    *,
    workflow: str | None,
    events: Sequence[ExternalEvent],
    keep_open: bool,
    queue: str | None,
    body: bytes,
    overlap: OverlapPolicy,
    time_zone: str,
    catch_up_window: timedelta | None,
) -> spb.Schedule:
    """The definition create_schedule and update_schedule send."""
    if (workflow is None) == (queue is None):
        raise ValueError(
            "a schedule starts a workflow or enqueues a job: give exactly one of workflow, queue"
        )
    s = spb.Schedule(
        name=name,
        cron=cron,
        time_zone=time_zone,
        overlap=f"OVERLAP_POLICY_{overlap.name}",
    )
    if workflow is not None:
        s.workflow.CopyFrom(
            spb.ScheduleWorkflowTarget(
                workflow=workflow, events=events_to_proto(events), keep_open=keep_open
            )
        )
    else:
        s.job.CopyFrom(spb.ScheduleJobTarget(queue=queue, body=body))
    if catch_up_window is not None:
        s.catch_up = spb.CATCH_UP_LATEST
        s.catch_up_window.CopyFrom(to_duration(catch_up_window, "catch_up_window"))
    return s


def page_size(value: int | None) -> int:
    """The limit to send (0: the server's default of 100); InvalidArgumentError naming the
    bound, before any call, for a size the server would refuse."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PAGE_SIZE:
        raise invalid("page_size", f"page_size {value!r}: an int from 1 to {MAX_PAGE_SIZE}")
    return value


def get_schedule_request(name: str, upcoming: int) -> spb.GetScheduleRequest:
    # new(): an upcoming the wire cannot carry becomes InvalidArgumentError naming it.
    return new(spb.GetScheduleRequest, name=name, upcoming=upcoming)


def list_instances_request(
    workflow: str, state: InstanceState | None, limit: int, page_token: str
) -> wpb.ListInstancesRequest:
    return wpb.ListInstancesRequest(
        workflow=workflow,
        state=None if state is None else f"INSTANCE_STATE_{state.name}",
        limit=limit,
        page_token=page_token,
    )


def schedule_from_proto(s: spb.Schedule) -> Schedule:
    return Schedule(
        name=s.name,
        cron=s.cron,
        time_zone=s.time_zone,
        overlap=OverlapPolicy(s.overlap),
        paused=s.paused,
        next_fire_at=_opt_ts(s, "next_fire_at"),
        last_started=s.last_started,
        fires=s.fires,
        history=tuple(
            ScheduleFire(
                outcome=FireOutcome(f.outcome),
                at=_opt_ts(f, "at"),
                through=_opt_ts(f, "through"),
                fired_at=_opt_ts(f, "fired_at"),
                started=f.started,
                previous=f.previous,
                error=f.error,
            )
            for f in s.history
        ),
        upcoming=tuple(from_timestamp(t) for t in s.upcoming),
    )


def check_wait(timeout: timedelta, poll_interval: timedelta) -> None:
    """ValueError for a wait out of bounds (timeout 0 to 1 day, poll 10 ms to 1 day)."""
    if not timedelta(0) <= timeout <= _DAY:
        raise ValueError(f"timeout {timeout}: 0 to 1 day")
    if not timedelta(milliseconds=10) <= poll_interval <= _DAY:
        raise ValueError(f"poll_interval {poll_interval}: 10 ms to 1 day")


def wait_timed_out(instance: Instance, timeout: timedelta) -> DeadlineExceededError:
    ms = int(timeout / timedelta(milliseconds=1))
    return DeadlineExceededError(
        "deadline_exceeded",
        f"instance {instance.instance_id} still {instance.state.name} after {ms} ms",
    )
