"""Workflows through the SDK: the builder, the Success output and its bound, and a Worker
whose handlers hand their outputs to the downstream runs (sync and async clients)."""

from __future__ import annotations

import asyncio
import secrets
from datetime import timedelta

import pytest
from helpers import QueueFactory, running

from runlater import (
    MAX_RESULT_BYTES,
    AsyncClient,
    Client,
    DeadlineExceededError,
    DequeuedJob,
    External,
    ExternalEvent,
    InstanceState,
    RunOutcome,
    Success,
    Upstream,
    Worker,
    Workflow,
)


def _name(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(4)}"


def test_success_refuses_a_result_over_4_kib_naming_the_bound() -> None:
    assert Success("ok", result=b"x" * MAX_RESULT_BYTES).result == b"x" * 4096
    assert Success(result="text").result == b"text"
    with pytest.raises(ValueError, match="Success result is 4097 bytes; at most 4096"):
        Success(result=b"x" * 4097)
    with pytest.raises(ValueError, match="result is 4097 bytes; at most 4096"):
        ExternalEvent("go", result=b"x" * 4097)


def test_workflow_builder_refuses_unknown_inputs_repeats_and_bad_names(client: Client) -> None:
    with pytest.raises(ValueError, match="job a takes input from nope, which is not defined"):
        client.apply_workflow(Workflow("w").job("a", queue="q", inputs=["nope"]))
    with pytest.raises(ValueError, match="defined twice"):
        Workflow("w").job("a", queue="q").job("a", queue="q")
    with pytest.raises(ValueError, match="workflow name"):
        Workflow("bad name")


def test_a_runs_result_reaches_the_downstream_runs_triggering_events(
    client: Client, make_queue: QueueFactory
) -> None:
    q, name = make_queue(), _name("chain")
    client.apply_workflow(
        Workflow(name)
        .job("a", queue=q, inputs=[External("go")], body=b"a")
        .job("b", queue=q, inputs=["a"], body=b"b")
    )
    seen: list[DequeuedJob] = []
    app = Worker(client, poll_wait=timedelta(milliseconds=200))

    @app.handler(q)
    def handle(job: DequeuedJob) -> Success | str:
        seen.append(job)
        return Success("a done", result=b"from-a") if job.body == b"a" else "b done"

    started = client.start_instance(name, events=[ExternalEvent("go", "ext", b"in")])
    with running(app):
        ended = client.wait_for_instance(
            started.instance_id,
            timeout=timedelta(seconds=10),
            poll_interval=timedelta(milliseconds=20),
        )
    assert ended.state == InstanceState.SUCCEEDED
    b = next(j for j in seen if j.body == b"b")
    assert b.workflow is not None and b.workflow.job == "b"
    assert [(e.from_job, e.custom_status, e.result) for e in b.workflow.triggered_by] == [
        ("a", "a done", b"from-a")
    ]
    a = next(j for j in seen if j.body == b"a")
    assert a.workflow is not None
    assert [(e.input, e.result) for e in a.workflow.triggered_by] == [("external:go", b"in")]


def test_no_events_stops_a_cycle_async_client(server_url: str, make_queue: QueueFactory) -> None:
    q, name = make_queue(), _name("loop")

    async def scenario() -> None:
        async with AsyncClient(server_url) as ac:
            await ac.apply_workflow(
                Workflow(name).job("tick", queue=q, inputs=[Upstream("tick", seed=True)])
            )
            instance = await ac.start_instance(name)
            with Client(server_url) as c:
                app = Worker(c, poll_wait=timedelta(milliseconds=200))

                @app.handler(q)
                def handle(job: DequeuedJob) -> Success:
                    assert job.workflow is not None
                    return Success(f"run {job.workflow.run}", no_events=job.workflow.run == 3)

                with running(app):
                    ended = await ac.wait_for_instance(
                        instance.instance_id,
                        timeout=timedelta(seconds=10),
                        poll_interval=timedelta(milliseconds=20),
                    )
        assert ended.state == InstanceState.SUCCEEDED
        tick = ended.job("tick")
        assert tick.run_count == 3
        assert [r.outcome for r in tick.runs] == [RunOutcome.SUCCEEDED] * 3

    asyncio.run(scenario())


def test_wait_for_instance_gives_up_with_deadline_exceeded(
    client: Client, make_queue: QueueFactory
) -> None:
    q, name = make_queue(), _name("idle")
    client.apply_workflow(Workflow(name).job("a", queue=q))
    instance = client.start_instance(name)  # no worker: it stays RUNNING
    with pytest.raises(
        DeadlineExceededError, match=f"instance {instance.instance_id} still RUNNING after 50 ms"
    ):
        client.wait_for_instance(
            instance.instance_id,
            timeout=timedelta(milliseconds=50),
            poll_interval=timedelta(milliseconds=10),
        )


def test_a_runs_trimmed_flag_comes_through() -> None:
    from runlater._gen.v1 import workflow_service_pb2 as wpb
    from runlater._workflow_convert import instance_from_proto

    message = wpb.Instance(
        instance_id="i1",
        jobs=[wpb.InstanceJob(name="a", runs=[wpb.JobRun(run=1, trimmed=True), wpb.JobRun(run=2)])],
    )
    runs = instance_from_proto(message).jobs[0].runs
    assert [(r.run, r.trimmed) for r in runs] == [(1, True), (2, False)]
