"""Values a request cannot carry are refused on the client, the same on Client and AsyncClient:
an InvalidArgumentError naming the field and its bounds, never a bare protobuf error."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from helpers import QueueFactory

from runlater import (
    AsyncClient,
    Client,
    ErrorReason,
    InvalidArgumentError,
    JobCheckpoint,
    JobFailure,
    JobSpec,
    JobState,
    QueueConfig,
    QueueRetryPolicy,
)

UINT32_MAX = 2**32 - 1
# The longest google.protobuf.Duration: 10,000 years.
DURATION_MAX = timedelta(seconds=315_576_000_000)

Call = Callable[..., Any]


@pytest.fixture(params=["sync", "async"])
def call(request: pytest.FixtureRequest, server_url: str) -> Iterator[Call]:
    """call("method", *args, **kw) on a Client, or awaited on an AsyncClient."""
    if request.param == "sync":
        with Client(server_url) as c:
            yield lambda name, *a, **kw: getattr(c, name)(*a, **kw)
        return

    async def on_async(name: str, *a: Any, **kw: Any) -> Any:
        async with AsyncClient(server_url) as c:
            return await getattr(c, name)(*a, **kw)

    yield lambda name, *a, **kw: asyncio.run(on_async(name, *a, **kw))


def _refused(call: Call, method: str, *args: Any, **kw: Any) -> InvalidArgumentError:
    with pytest.raises(InvalidArgumentError) as info:
        call(method, *args, **kw)
    err = info.value
    assert err.code == "invalid_argument"
    return err


@pytest.mark.parametrize("priority", [-1, UINT32_MAX + 1])
def test_enqueue_priority_outside_uint32_names_the_field_and_bounds(
    call: Call, make_queue: QueueFactory, priority: int
) -> None:
    err = _refused(call, "enqueue", make_queue(), b"x", priority=priority)
    assert err.field == "jobs[0].priority"
    assert err.reason is ErrorReason.INVALID_PRIORITY
    assert str(priority) in err.message
    assert "0" in err.message and str(UINT32_MAX) in err.message


def test_enqueue_priority_at_the_bounds_reaches_the_server(
    call: Call, make_queue: QueueFactory
) -> None:
    q = make_queue()
    assert call("enqueue", q, b"x", priority=0)  # 0: the queue's default
    # The largest value the wire carries: the server, not the client, refuses it.
    err = _refused(call, "enqueue", q, b"x", priority=UINT32_MAX)
    assert err.reason is ErrorReason.INVALID_PRIORITY
    assert "this queue has priorities" in err.message


def test_enqueue_many_names_the_job_at_fault(call: Call, make_queue: QueueFactory) -> None:
    q = make_queue()
    specs = [JobSpec(q, b"fine"), JobSpec(q, b"bad", attempts_allowed=-1)]
    err = _refused(call, "enqueue_many", specs)
    assert err.field == "jobs[1].attempts_allowed"
    assert err.reason is ErrorReason.INVALID_ARGUMENT


@pytest.mark.parametrize(
    ("value", "says"),
    [(1.5, "float"), ("1", "str")],
)
def test_a_number_field_of_the_wrong_type_is_refused(
    call: Call, make_queue: QueueFactory, value: object, says: str
) -> None:
    err = _refused(call, "enqueue", make_queue(), b"x", priority=value)
    assert err.field == "jobs[0].priority"
    assert says in err.message


@pytest.mark.parametrize(
    ("body", "says"),
    [(object(), "a value of type object is not JSON"), ({"x": float("nan")}, "float")],
)
def test_a_body_that_json_cannot_carry_is_refused(
    call: Call, make_queue: QueueFactory, body: object, says: str
) -> None:
    q = make_queue()
    err = _refused(call, "enqueue_many", [JobSpec(q, b"fine"), JobSpec(q, body)])
    assert err.field == "jobs[1].body"
    assert err.message.startswith("jobs[1].body must be bytes, a str or a JSON value")
    assert says in err.message


def test_run_after_past_the_last_datetime_is_refused(call: Call, make_queue: QueueFactory) -> None:
    err = _refused(call, "enqueue", make_queue(), b"x", run_after=timedelta(days=5_000_000))
    assert err.field == "jobs[0].run_after"


@pytest.mark.parametrize(
    ("method", "args", "kw", "field"),
    [
        ("dequeue", (), {"limit": -1}, "limit"),
        ("scan_jobs", (), {"limit": UINT32_MAX + 1}, "limit"),
        ("count_jobs", (), {"priority": -1}, "priority"),
        ("retry_failed_jobs", (), {"attempts_allowed": -1}, "attempts_allowed"),
        ("delete_jobs", (JobState.FAILED,), {"limit": -1}, "limit"),
        (
            "checkpoint",
            ([JobCheckpoint("j", "t", attempts_allowed=-1)],),
            {},
            "checkpoints[0].attempts_allowed",
        ),
        ("update_queue", (QueueConfig(priorities=-1),), {}, "config.priorities"),
        (
            "update_queue",
            (QueueConfig(retry_policy=QueueRetryPolicy(linear_steps=UINT32_MAX + 1)),),
            {},
            "config.retry_policy.linear_steps",
        ),
        (
            "update_queue",
            (QueueConfig(claim_timeout=DURATION_MAX + timedelta(seconds=1)),),
            {},
            "config.claim_timeout",
        ),
        (
            "ack",
            (),
            {"failed": [JobFailure("j", "t", retry_delay=DURATION_MAX + timedelta(seconds=1))]},
            "failed[0].retry_delay",
        ),
        ("ack", (), {"failed": [JobFailure("j", "t", retry_delay=5)]}, "failed[0].retry_delay"),  # type: ignore[arg-type]
    ],
)
def test_every_call_refuses_values_it_cannot_send(
    call: Call,
    make_queue: QueueFactory,
    method: str,
    args: tuple[Any, ...],
    kw: dict[str, Any],
    field: str,
) -> None:
    err = _refused(call, method, make_queue(), *args, **kw)
    assert err.field == field
    assert field.rsplit(".", 1)[-1].split("[")[0] in err.message


def test_durations_at_the_protobuf_bound_are_sent(call: Call, make_queue: QueueFactory) -> None:
    q = make_queue()
    # The longest Duration the wire carries passes the client; the server answers it with
    # its own bound (a retry delay of at most 365 days).
    err = _refused(call, "ack", q, failed=[JobFailure(f"{q}.0.x", "t", retry_delay=DURATION_MAX)])
    assert err.field == "failed[0].retry_delay"
    assert "longest allowed is 365 days" in err.message
