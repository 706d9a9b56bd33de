"""The clients' instance and schedule helpers against a real server: lists that filter
and follow page tokens, cancel/close/rerun/disable/enable, a schedule's whole life, and
page sizes refused before any call."""

from __future__ import annotations

import asyncio
import secrets
from datetime import timedelta
from typing import Any

import pytest
from helpers import QueueFactory, running, wait_for

from runlater import (
    AsyncClient,
    Client,
    DequeuedJob,
    External,
    ExternalEvent,
    Instance,
    InstanceJobState,
    InstanceState,
    InvalidArgumentError,
    NotFoundError,
    OverlapPolicy,
    Worker,
    Workflow,
)


def _name(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(4)}"


def _one_job_workflow(client: Client, queue: str) -> str:
    """A workflow of one job "a" on `queue`, fed by the external input "go"."""
    name = _name("flow")
    client.apply_workflow(Workflow(name).job("a", queue=queue, inputs=[External("go")]))
    return name


def test_iter_instances_filters_by_workflow_and_state_across_pages(
    client: Client, make_queue: QueueFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = make_queue()
    a, b = _one_job_workflow(client, q), _one_job_workflow(client, q)
    started = [client.start_instance(a, keep_open=True) for _ in range(3)]
    client.start_instance(b, keep_open=True)
    client.cancel_instance(started[0].instance_id)
    calls = 0
    list_instances = client._stubs.workflows.list_instances

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return list_instances(*args, **kwargs)

    monkeypatch.setattr(client._stubs.workflows, "list_instances", counting)
    ids = sorted(i.instance_id for i in client.iter_instances(workflow=a, page_size=1))
    assert ids == sorted(i.instance_id for i in started)
    assert calls >= 3  # one instance a page
    running_ = client.iter_instances(workflow=a, state=InstanceState.RUNNING, page_size=1)
    assert sorted(i.instance_id for i in running_) == sorted(
        [started[1].instance_id, started[2].instance_id]
    )
    cancelled = list(client.iter_instances(workflow=a, state=InstanceState.CANCELLED))
    assert [i.instance_id for i in cancelled] == [started[0].instance_id]


def test_a_bad_page_size_is_refused_before_any_call_naming_the_bound(client: Client) -> None:
    for bad in (0, 1001, -1):
        with pytest.raises(InvalidArgumentError, match=rf"page_size {bad}: an int from 1 to 1000"):
            client.iter_instances(page_size=bad)
        with pytest.raises(InvalidArgumentError) as err:
            client.iter_schedules(page_size=bad)
        assert err.value.field == "page_size"


def test_rerun_disable_enable_close_and_cancel_steer_instances(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    name = _one_job_workflow(client, q)
    app = Worker(client, poll_wait=timedelta(milliseconds=200))

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        return "ok"

    def ended_runs(instance_id: str, n: int) -> Instance:
        def probe() -> Instance | None:
            i = client.get_instance(instance_id)
            return i if sum(r.ended_at is not None for r in i.job("a").runs) == n else None

        return wait_for(probe)

    with running(app):
        iid = client.start_instance(name, events=[ExternalEvent("go")], keep_open=True).instance_id
        ended_runs(iid, 1)
        assert client.rerun_job(iid, "a", 1).state == InstanceState.RUNNING
        ended_runs(iid, 2)
        assert client.disable_job(iid, "a").job("a").state == InstanceJobState.DISABLED
        fed = client.post_event(iid, ExternalEvent("go"))
        assert len(fed.job("a").pending_events) == 1  # it gathers; nothing runs
        assert client.enable_job(iid, "a").job("a").state != InstanceJobState.DISABLED
        ended_runs(iid, 3)
        assert client.close_instance(iid).state == InstanceState.SUCCEEDED
    other = client.start_instance(name, keep_open=True).instance_id
    assert client.cancel_instance(other).state == InstanceState.CANCELLED
    assert client.get_instance(other).state == InstanceState.CANCELLED


def test_a_schedule_is_created_listed_updated_paused_resumed_and_deleted(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    names = [_name("s"), _name("s")]
    for n in names:
        schedule, created = client.create_schedule(n, "0 3 * * *", queue=q, body=b"tick")
        assert created and schedule.next_fire_at is not None
    again, created = client.create_schedule(names[0], "@hourly", queue=q)
    assert not created and again.cron == "0 3 * * *"
    listed = [s.name for s in client.iter_schedules(page_size=1)]
    assert set(names) <= set(listed)

    updated = client.update_schedule(
        names[0], "30 4 * * *", queue=q, time_zone="Europe/Berlin", overlap=OverlapPolicy.ALLOW
    )
    assert (updated.cron, updated.time_zone, updated.overlap) == (
        "30 4 * * *",
        "Europe/Berlin",
        OverlapPolicy.ALLOW,
    )
    paused = client.pause_schedule(names[0])
    assert paused.paused and paused.next_fire_at is None
    resumed = client.resume_schedule(names[0])
    assert not resumed.paused and resumed.next_fire_at is not None
    assert len(client.get_schedule(names[0], upcoming=3).upcoming) == 3

    assert client.delete_schedule(names[0]) is True
    assert client.delete_schedule(names[0]) is False
    with pytest.raises(NotFoundError):
        client.get_schedule(names[0])
    client.delete_schedule(names[1])


def test_the_async_client_lists_and_steers_the_same_way(
    server_url: str, client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    wf = _one_job_workflow(client, q)
    sched = _name("s")

    async def scenario() -> None:
        async with AsyncClient(server_url) as ac:
            with pytest.raises(InvalidArgumentError, match="page_size 0: an int from 1 to 1000"):
                ac.iter_instances(page_size=0)
            started = [await ac.start_instance(wf, keep_open=True) for _ in range(2)]
            assert (await ac.cancel_instance(started[0].instance_id)).state == (
                InstanceState.CANCELLED
            )
            assert (await ac.close_instance(started[1].instance_id)).state == (
                InstanceState.SUCCEEDED
            )
            seen = [i.instance_id async for i in ac.iter_instances(workflow=wf, page_size=1)]
            assert sorted(seen) == sorted(i.instance_id for i in started)

            await ac.create_schedule(sched, "@daily", workflow=wf, paused=True)
            assert (await ac.resume_schedule(sched)).paused is False
            assert (await ac.pause_schedule(sched)).paused is True
            updated = await ac.update_schedule(sched, "@hourly", workflow=wf)
            assert (updated.cron, updated.paused) == ("@hourly", True)  # paused stays
            assert sched in [s.name async for s in ac.iter_schedules(page_size=1)]
            assert await ac.delete_schedule(sched) is True

    asyncio.run(scenario())
