"""Every Client call against a real server."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from helpers import QueueFactory, wait_for

from runlater import (
    Client,
    ErrorReason,
    InvalidArgumentError,
    JobCheckpoint,
    JobFailure,
    JobSpec,
    JobState,
    JobSuccess,
    NotFoundError,
    Outcome,
    QueueConfig,
    QueueRetryPolicy,
    ResourceExhaustedError,
    RunlaterError,
)


def _now() -> datetime:
    return datetime.now(timezone.utc)


# --- JobService ---------------------------------------------------------------------------


def test_enqueue_one_and_get_it_back(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    before = _now()
    job_id = client.enqueue(q, b"\x00payload\xff", priority=2, custom_status="from test")

    job = client.get_job(job_id, include_body=True)
    assert job is not None
    assert job.job_id == job_id
    assert job.queue == q
    assert job.state is JobState.PENDING
    assert job.priority == 2
    assert job.body == b"\x00payload\xff"
    assert job.attempts_allowed == 11  # queue default: 10 retries
    assert job.attempts_remaining == 11
    assert "from test" in job.custom_status
    assert job.created_at is not None and job.created_at.tzinfo is not None
    assert job.created_at >= before - timedelta(seconds=5)
    assert job.claim_expires_at is None
    assert job.finished_at is None


def test_get_jobs_lists_unknown_ids_instead_of_failing(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    job_id = client.enqueue(q, "text body")
    result = client.get_jobs([job_id, f"{q}.0.doesnotexist"])
    assert [j.job_id for j in result.jobs] == [job_id]
    assert result.jobs[0].body == b""  # bodies only on request
    assert result.not_found_job_ids == [f"{q}.0.doesnotexist"]


def test_enqueue_many_returns_ids_in_order_and_is_all_or_nothing(
    client: Client, make_queue: QueueFactory
) -> None:
    q1, q2 = make_queue(), make_queue()
    ids = client.enqueue_many(
        [JobSpec(q1, b"a"), JobSpec(q2, b"b"), JobSpec(q1, b"c", attempts_allowed=3)]
    )
    assert len(ids) == 3
    jobs = client.get_jobs(ids, include_body=True).jobs
    assert [(j.queue, j.body) for j in jobs] == [(q1, b"a"), (q2, b"b"), (q1, b"c")]
    assert jobs[2].attempts_allowed == 3

    with pytest.raises(InvalidArgumentError) as exc:
        client.enqueue_many([JobSpec(q1, b"ok"), JobSpec(q1, b"bad", priority=99)])
    assert exc.value.code == "invalid_argument"
    assert exc.value.reason is ErrorReason.INVALID_PRIORITY
    assert client.count_jobs(q1) == 2  # nothing of the rejected batch was written


def test_idempotency_key_returns_the_first_job(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    first = client.enqueue(q, b"1", idempotency_key="order-42")
    second = client.enqueue(q, b"2", idempotency_key="order-42")
    assert first == second
    assert client.count_jobs(q) == 1


def test_ordering_key_round_trips(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    one = client.enqueue(q, b"1", ordering_key="customer-7")
    two, three = client.enqueue_many(
        [JobSpec(q, b"2", ordering_key="customer-8"), JobSpec(q, b"3")]
    )
    jobs = client.get_jobs([one, two, three]).jobs
    assert [j.ordering_key for j in jobs] == ["customer-7", "customer-8", ""]
    scanned = {j.job_id: j.ordering_key for j in client.scan_jobs(q).jobs}
    assert scanned == {one: "customer-7", two: "customer-8", three: ""}


def test_same_ordering_key_waits_for_the_job_before_it(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    first, second = client.enqueue_many(
        [JobSpec(q, b"1", ordering_key="k"), JobSpec(q, b"2", ordering_key="k")]
    )
    got = client.dequeue(q, limit=10).jobs
    assert [j.job_id for j in got] == [first]
    assert client.dequeue(q, limit=10).jobs == []
    waiting = client.get_job(second)
    assert waiting is not None and waiting.state is JobState.PENDING

    client.ack(q, succeeded=[JobSuccess(first, got[0].claim_token)])
    assert [j.job_id for j in client.dequeue(q, limit=10).jobs] == [second]


def test_different_ordering_keys_run_in_parallel(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    a1, b1, _a2, free = client.enqueue_many(
        [
            JobSpec(q, b"a1", ordering_key="a"),
            JobSpec(q, b"b1", ordering_key="b"),
            JobSpec(q, b"a2", ordering_key="a"),
            JobSpec(q, b"none"),
        ]
    )
    got = client.dequeue(q, limit=10).jobs
    assert sorted(j.job_id for j in got) == sorted([a1, b1, free])


def test_fifo_queue_runs_one_job_at_a_time_in_enqueue_order(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue(fifo=True, priorities=3)
    ids = client.enqueue_many(
        [
            JobSpec(q, b"1", priority=3),
            JobSpec(q, b"2", priority=1, ordering_key="ignored"),
            JobSpec(q, b"3", priority=2),
        ]
    )
    assert [j.ordering_key for j in client.get_jobs(ids).jobs] == ["", "", ""]
    for job_id in ids:
        got = client.dequeue(q, limit=10).jobs
        assert [j.job_id for j in got] == [job_id]
        client.ack(q, succeeded=[JobSuccess(job_id, got[0].claim_token)])
    assert client.dequeue(q, limit=10).jobs == []


def test_run_after_in_the_future_is_scheduled(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    later = client.enqueue(q, b"later", run_after=timedelta(hours=1))
    client.enqueue(q, b"now")
    job = client.get_job(later)
    assert job is not None and job.run_after is not None
    assert job.run_after > _now() + timedelta(minutes=59)
    assert client.count_jobs(q, future=True) == 1
    assert client.count_jobs(q, future=False) == 1
    got = client.dequeue(q, limit=10)
    assert [j.body for j in got.jobs] == [b"now"]


def test_scan_pages_filters_and_orders_newest_run_after_first(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    base = _now()
    ids = [
        client.enqueue(q, f"job-{i}".encode(), run_after=base + timedelta(seconds=i), priority=1)
        for i in range(5)
    ]
    client.enqueue(q, b"other", priority=3)

    page1 = client.scan_jobs(q, priority=1, limit=2, include_body=True)
    assert [j.job_id for j in page1.jobs] == [ids[4], ids[3]]
    assert page1.jobs[0].body == b"job-4"
    assert page1.next_page_token
    page2 = client.scan_jobs(q, priority=1, limit=2, page_token=page1.next_page_token)
    assert [j.job_id for j in page2.jobs] == [ids[2], ids[1]]

    everything = list(client.iter_jobs(q, priority=1, page_size=2))
    assert [j.job_id for j in everything] == list(reversed(ids))

    matched = client.scan_jobs(q, body_regex="^job-[13]$")
    assert sorted(j.job_id for j in matched.jobs) == sorted([ids[1], ids[3]])
    assert client.count_jobs(q, body_regex="^job-") == 5
    assert client.count_jobs(q, state=JobState.PENDING) == 6
    assert client.count_jobs(q, state=JobState.RUNNING) == 0


def test_retry_failed_and_delete_jobs(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    job_id = client.enqueue(q, b"x", attempts_allowed=1)
    job = client.dequeue(q).jobs[0]
    client.ack(q, failed=[JobFailure(job.job_id, job.claim_token, "boom")])
    failed = client.get_job(job_id)
    assert failed is not None and failed.state is JobState.FAILED
    assert failed.finished_at is not None
    assert "boom" in failed.custom_status

    assert client.retry_failed_jobs(q, attempts_allowed=2) == 1
    retried = client.get_job(job_id)
    assert retried is not None
    assert retried.state is JobState.PENDING
    assert retried.attempts_remaining == 2

    assert client.delete_jobs(q, JobState.FAILED) == 0
    assert client.delete_jobs(q, JobState.PENDING) == 1
    assert client.get_job(job_id) is None


# --- QueueService -------------------------------------------------------------------------


def test_queue_admin_create_get_update_list_delete(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue(priorities=5, claim_timeout=timedelta(seconds=30), fifo=False)
    queue, created = client.create_queue(q)
    assert created is False  # idempotent: the fixture created it already
    assert queue.name == q
    assert queue.config.priorities == 5
    assert queue.config.claim_timeout == timedelta(seconds=30)
    assert queue.config.default_attempts_allowed == 11
    assert queue.config.retry_policy == QueueRetryPolicy(
        timedelta(seconds=5), 5, timedelta(hours=1)
    )

    client.enqueue(q, b"x")
    got = client.get_queue(q)
    assert got.stats.pending == 1
    assert got.stats.running == 0

    updated = client.update_queue(
        q,
        QueueConfig(
            paused=True,
            max_dequeue_per_second=50.0,
            retry_policy=QueueRetryPolicy(timedelta(seconds=1), 2, timedelta(minutes=1)),
        ),
    )
    assert updated.config.paused is True
    assert updated.config.max_dequeue_per_second == 50.0
    assert updated.config.retry_policy == QueueRetryPolicy(
        timedelta(seconds=1), 2, timedelta(minutes=1)
    )
    assert updated.config.priorities == 5  # not in the mask: unchanged
    assert client.dequeue(q, limit=5).jobs == []  # paused hands out nothing

    assert q in [x.name for x in client.list_queues()]
    assert client.delete_queue(q) is True
    assert client.delete_queue(q) is False
    with pytest.raises(NotFoundError) as exc:
        client.get_queue(q)
    assert exc.value.code == "not_found"
    assert exc.value.reason is ErrorReason.QUEUE_NOT_FOUND


def test_update_queue_with_empty_mask_is_refused(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    with pytest.raises(InvalidArgumentError):
        client.update_queue(q, QueueConfig())


def test_errors_carry_code_and_reason(client: Client, make_queue: QueueFactory) -> None:
    with pytest.raises(NotFoundError) as nf:
        client.enqueue("no_such_queue_" + "x" * 8, b"x")
    assert nf.value.reason is ErrorReason.QUEUE_NOT_FOUND

    with pytest.raises(InvalidArgumentError) as bad:
        client.create_queue("not a valid name!")
    assert bad.value.reason is ErrorReason.INVALID_QUEUE_NAME
    assert isinstance(bad.value, RunlaterError)

    q = make_queue(max_body_bytes=16)
    with pytest.raises(ResourceExhaustedError) as big:
        client.enqueue(q, b"x" * 17)
    assert big.value.code == "resource_exhausted"
    assert big.value.reason is ErrorReason.BODY_TOO_LARGE


# --- WorkerService ------------------------------------------------------------------------


def test_dequeue_hands_out_by_priority_then_age_and_ack_finishes(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    low = client.enqueue(q, b"low", priority=3)
    high1 = client.enqueue(q, b"high1", priority=1)
    high2 = client.enqueue(q, b"high2", priority=1)

    got = client.dequeue(q, limit=2, worker_id="pytest")
    assert [j.job_id for j in got.jobs] == [high1, high2]
    first = got.jobs[0]
    assert first.attempt == 1
    assert first.attempts_allowed == 11
    assert first.claim_token
    assert first.claim_expires_at is not None and first.claim_expires_at > _now()
    running = client.get_job(high1)
    assert running is not None and running.state is JobState.RUNNING
    assert running.attempts_remaining == 10

    outcomes = client.ack(
        q,
        succeeded=[JobSuccess(high1, first.claim_token, "done")],
        failed=[
            JobFailure(high2, got.jobs[1].claim_token, "later", retry_delay=timedelta(hours=1))
        ],
    )
    assert [(o.job_id, o.outcome) for o in outcomes] == [
        (high1, Outcome.ACKNOWLEDGED),
        (high2, Outcome.ACKNOWLEDGED),
    ]
    done = client.get_job(high1)
    assert done is not None and done.state is JobState.SUCCEEDED and "done" in done.custom_status
    retry = client.get_job(high2)
    assert retry is not None and retry.state is JobState.PENDING
    assert retry.run_after is not None and retry.run_after > _now() + timedelta(minutes=59)

    assert [j.job_id for j in client.dequeue(q, limit=5).jobs] == [low]


def test_ack_piggybacks_on_dequeue(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    a = client.enqueue(q, b"a")
    b = client.enqueue(q, b"b")
    first = client.dequeue(q).jobs[0]
    assert first.job_id == a
    nxt = client.dequeue(q, succeeded=[JobSuccess(a, first.claim_token)])
    assert [(o.job_id, o.outcome) for o in nxt.ack_results] == [(a, Outcome.ACKNOWLEDGED)]
    assert [j.job_id for j in nxt.jobs] == [b]
    job = client.get_job(a)
    assert job is not None and job.state is JobState.SUCCEEDED


def test_dry_run_peeks_without_claiming(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    job_id = client.enqueue(q, b"peek")
    peek = client.dequeue(q, limit=5, dry_run=True)
    assert [(j.job_id, j.body, j.claim_token) for j in peek.jobs] == [(job_id, b"peek", "")]
    job = client.get_job(job_id)
    assert job is not None and job.state is JobState.PENDING
    assert client.dequeue(q).jobs[0].job_id == job_id


def test_long_poll_returns_when_a_job_arrives(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    import threading

    q = make_queue()
    result: list[object] = []
    poller = threading.Thread(
        target=lambda: result.append(client.dequeue(q, wait=timedelta(seconds=20)))
    )
    start = _now()
    poller.start()
    with Client(server_url) as producer:
        wait_for(lambda: _now() - start > timedelta(milliseconds=200) or None)
        job_id = producer.enqueue(q, b"wake up")
    poller.join(timeout=15)
    assert not poller.is_alive()
    assert [j.job_id for j in result[0].jobs] == [job_id]  # type: ignore[attr-defined]
    assert _now() - start < timedelta(seconds=10)


def test_long_poll_returns_empty_when_the_wait_runs_out(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    start = _now()
    got = client.dequeue(q, wait=timedelta(milliseconds=300))
    assert got.jobs == []
    assert _now() - start >= timedelta(milliseconds=250)


def test_claim_timeout_and_stale_claim_ack_is_refused(
    client: Client, make_queue: QueueFactory
) -> None:
    # A short retry policy so the timed-out job is due again at once.
    fast = QueueRetryPolicy(timedelta(milliseconds=10), 1, timedelta(milliseconds=10))
    q = make_queue(claim_timeout=timedelta(milliseconds=300), retry_policy=fast)
    job_id = client.enqueue(q, b"slow")
    first = client.dequeue(q).jobs[0]

    # The claim expires and the job comes back: the timeout counted as a failed attempt.
    second = wait_for(lambda: client.dequeue(q).jobs, timeout=10)[0]
    assert second.job_id == job_id
    assert second.attempt == 2
    assert second.claim_token != first.claim_token

    stale = client.ack(q, succeeded=[JobSuccess(job_id, first.claim_token)])
    assert stale[0].outcome is Outcome.STALE_CLAIM
    job = client.get_job(job_id)
    assert job is not None and job.state is JobState.RUNNING  # the stale ack changed nothing

    fresh = client.ack(q, succeeded=[JobSuccess(job_id, second.claim_token)])
    assert fresh[0].outcome is Outcome.ACKNOWLEDGED
    assert client.ack(q, succeeded=[JobSuccess(f"{q}.0.gone", "x")])[0].outcome is Outcome.NOT_FOUND


def test_checkpoint_extends_replaces_body_and_releases(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue(claim_timeout=timedelta(seconds=2))
    job_id = client.enqueue(q, b"v1")
    job = client.dequeue(q).jobs[0]
    assert job.claim_expires_at is not None

    [ext] = client.checkpoint(
        q,
        [
            JobCheckpoint(
                job_id, job.claim_token, extend_claim_by=timedelta(minutes=10), new_body=b"v2"
            )
        ],
    )
    assert ext.outcome is Outcome.ACKNOWLEDGED
    extended = client.get_job(job_id, include_body=True)
    assert extended is not None and extended.claim_expires_at is not None
    assert extended.claim_expires_at > _now() + timedelta(minutes=9)
    assert extended.body == b"v2"

    [renew] = client.checkpoint(q, [JobCheckpoint(job_id, job.claim_token)])
    assert renew.outcome is Outcome.ACKNOWLEDGED

    [rel] = client.checkpoint(
        q,
        [
            JobCheckpoint(
                job_id,
                job.claim_token,
                move_to_pending=True,
                run_after=timedelta(hours=1),
                custom_status="snoozed",
            )
        ],
    )
    assert rel.outcome is Outcome.ACKNOWLEDGED
    released = client.get_job(job_id)
    assert released is not None and released.state is JobState.PENDING
    assert released.attempts_remaining == 11  # no attempt charged
    assert released.run_after is not None and released.run_after > _now() + timedelta(minutes=59)
    assert "snoozed" in released.custom_status

    [stale] = client.checkpoint(q, [JobCheckpoint(job_id, job.claim_token)])
    assert stale.outcome is Outcome.STALE_CLAIM


@pytest.mark.parametrize(
    ("protocol", "http_version", "streams"),
    [
        ("connect", None, False),
        ("connect", "1.1", False),
        ("connect", "2", True),  # h2c with prior knowledge
        ("grpc-web", None, False),
        ("grpc-web", "2", False),  # HTTP/2, but gRPC-Web has no bidirectional streams
        ("grpc", None, True),
    ],
)
def test_every_protocol_round_trips(
    server_url: str,
    make_queue: QueueFactory,
    protocol: str,
    http_version: str | None,
    streams: bool,
) -> None:
    q = make_queue()
    with Client(server_url, protocol=protocol, http_version=http_version) as c:  # type: ignore[arg-type]
        assert c.streams is streams
        job_id = c.enqueue(q, b"over " + protocol.encode())
        job = c.dequeue(q).jobs[0]
        assert (job.job_id, job.body) == (job_id, b"over " + protocol.encode())
        assert (
            c.ack(q, succeeded=[JobSuccess(job_id, job.claim_token)])[0].outcome
            is Outcome.ACKNOWLEDGED
        )
        with pytest.raises(NotFoundError) as exc:
            c.get_queue(q + "_missing")
        assert exc.value.reason is ErrorReason.QUEUE_NOT_FOUND


def test_grpc_over_http_1_1_is_refused_when_the_client_is_made() -> None:
    with pytest.raises(ValueError, match="gRPC needs HTTP/2"):
        Client("http://127.0.0.1:1", protocol="grpc", http_version="1.1")
