"""Pure unit tests (no server): enums mirror the proto, retry math, conversions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from runlater import (
    ErrorReason,
    JobSpec,
    JobState,
    Outcome,
    QueueConfig,
    QueueRetryPolicy,
    retry,
)
from runlater import _convert as cv
from runlater._gen.v1 import errors_pb2, job_pb2, worker_service_pb2


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
    ts = cv.to_timestamp(naive)
    back = cv.from_timestamp(ts)
    assert back == naive.replace(tzinfo=timezone.utc)
    assert back.tzinfo is timezone.utc
    soon = cv.from_timestamp(cv.to_timestamp(timedelta(minutes=5)))
    assert timedelta(minutes=4) < soon - datetime.now(timezone.utc) < timedelta(minutes=6)


def test_job_spec_carries_the_ordering_key() -> None:
    msg = cv.job_spec_to_proto(JobSpec("q", b"x", ordering_key="customer-7"))
    assert msg.ordering_key == "customer-7"
    assert cv.job_spec_to_proto(JobSpec("q")).ordering_key == ""
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
