"""Pure unit tests (no server): enums mirror the proto, retry math, conversions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from runlater import (
    ErrorReason,
    JobSpec,
    JobState,
    Outcome,
    QueueConfig,
    QueueRetryPolicy,
    RetryAfter,
    Snooze,
    retry,
)
from runlater import _convert as cv
from runlater._gen.v1 import errors_pb2, job_pb2, worker_service_pb2
from runlater.control import MAX_DELAY


@pytest.mark.parametrize(
    ("py_enum", "proto_enum", "prefix"),
    [
        (JobState, job_pb2.JobState, "JOB_STATE_"),
        (Outcome, worker_service_pb2.Outcome, "OUTCOME_"),
        (ErrorReason, errors_pb2.ErrorReason, "ERROR_REASON_"),
    ],
)
def test_enums_mirror_every_proto_value(py_enum: type, proto_enum: object, prefix: str) -> None:
    proto = {name.removeprefix(prefix): num for name, num in proto_enum.items()}  # type: ignore[attr-defined]
    assert {m.name: m.value for m in py_enum} == proto  # type: ignore[attr-defined]


def test_pinlater_default_matches_the_queue_policy_formula() -> None:
    policy = retry.pinlater_default()
    delays = [policy.delay(n).total_seconds() for n in range(1, 11)]
    assert delays == [5, 10, 15, 20, 25, 50, 100, 200, 400, 800]
    assert policy.delay(30) == timedelta(hours=1)  # capped
    assert not policy.gives_up_after(10)
    assert policy.gives_up_after(11)  # 10 retries: the 11th attempt is the last


def test_constant_linear_exponential() -> None:
    assert retry.constant(timedelta(seconds=3)).delay(7) == timedelta(seconds=3)
    lin = retry.linear(timedelta(seconds=2), max_delay=timedelta(seconds=5))
    assert [lin.delay(n).total_seconds() for n in (1, 2, 3)] == [2, 4, 5]
    exp = retry.exponential(timedelta(seconds=1), max_delay=timedelta(seconds=10))
    assert [exp.delay(n).total_seconds() for n in (1, 2, 3, 4, 5, 500)] == [1, 2, 4, 8, 10, 10]
    assert retry.constant(timedelta(1), max_retries=2).gives_up_after(3)
    assert not retry.constant(timedelta(1)).gives_up_after(1000)


def test_timestamps_are_aware_utc_and_naive_input_is_utc() -> None:
    naive = datetime(2030, 1, 2, 3, 4, 5, 600000)
    ts = cv.to_timestamp(naive, "run_after")
    back = cv.from_timestamp(ts)
    assert back == naive.replace(tzinfo=timezone.utc)
    assert back.tzinfo is timezone.utc
    soon = cv.from_timestamp(cv.to_timestamp(timedelta(minutes=5), "run_after"))
    assert timedelta(minutes=4) < soon - datetime.now(timezone.utc) < timedelta(minutes=6)


def test_job_spec_carries_the_ordering_key() -> None:
    msg = cv.job_spec_to_proto(JobSpec("q", b"x", ordering_key="customer-7"), 0)
    assert msg.ordering_key == "customer-7"
    assert cv.job_spec_to_proto(JobSpec("q"), 0).ordering_key == ""
    job = cv.job_from_proto(job_pb2.Job(job_id="j", queue="q", ordering_key="customer-7"))
    assert job.ordering_key == "customer-7"


def test_update_mask_names_exactly_the_fields_set() -> None:
    req = cv.update_queue_request(
        "q",
        QueueConfig(
            paused=False,
            max_dequeue_per_second=0.0,
            retry_policy=QueueRetryPolicy(initial_delay=timedelta(seconds=1)),
        ),
    )
    assert list(req.update_mask.paths) == ["retry_policy", "max_dequeue_per_second", "paused"]
    assert req.config.retry_policy.initial_delay.seconds == 1
    assert req.config.retry_policy.linear_steps == 0


@pytest.mark.parametrize("make", [RetryAfter, Snooze], ids=["RetryAfter", "Snooze"])
@pytest.mark.parametrize(
    ("given", "delay"),
    [
        (5, timedelta(seconds=5)),
        (0.25, timedelta(milliseconds=250)),
        (timedelta(minutes=2), timedelta(minutes=2)),
        (0, timedelta(0)),
        (-3, timedelta(0)),  # a computed delay that is already past: no delay
        (timedelta(seconds=-1), timedelta(0)),
        (MAX_DELAY.total_seconds(), MAX_DELAY),
        (MAX_DELAY, MAX_DELAY),
    ],
)
def test_delays_take_a_timedelta_or_seconds(make: Any, given: object, delay: timedelta) -> None:
    assert make(given).delay == delay


@pytest.mark.parametrize("make", [RetryAfter, Snooze], ids=["RetryAfter", "Snooze"])
@pytest.mark.parametrize(
    ("given", "error", "says"),
    [
        ("5", TypeError, "not str '5'"),
        (None, TypeError, "not NoneType"),
        (True, TypeError, "not bool"),
        (float("nan"), ValueError, "finite"),
        (float("inf"), ValueError, "finite"),
        (MAX_DELAY.total_seconds() + 1, ValueError, "10,000 years"),
        (MAX_DELAY + timedelta(microseconds=1), ValueError, "10,000 years"),
    ],
)
def test_delays_of_another_type_or_out_of_range_are_refused_where_written(
    make: Any, given: object, error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match="delay") as info:
        make(given)
    assert says in str(info.value)
    assert "timedelta or a number of seconds" in str(info.value) or error is ValueError


def test_retry_after_delay_is_read_only() -> None:
    exc = RetryAfter(5)
    with pytest.raises(AttributeError):
        exc.delay = timedelta(7)  # type: ignore[misc]


def test_retry_policy_functions_may_return_seconds() -> None:
    assert retry.RetryPolicy(lambda n: n * 1.5).delay(2) == timedelta(seconds=3)
    with pytest.raises(TypeError, match="retry policy delay"):
        retry.RetryPolicy(lambda n: "soon").delay(1)  # type: ignore[arg-type,return-value]
