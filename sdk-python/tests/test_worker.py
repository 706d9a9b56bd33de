"""The Worker end to end against a real server: outcomes, retries, claims, shutdown.

The tests that take a `dequeue_mode` run once per mode (stream and poll); the ones with a
_TallyingClient are about poll mode's Dequeue calls. Stream-only tests: test_worker_stream.py.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers import APPS, QueueFactory, cli_command, running, wait_for

from runlater import (
    AsyncClient,
    Client,
    DequeuedJob,
    DequeueResult,
    DoNotRetry,
    Job,
    JobSpec,
    JobState,
    QueueRetryPolicy,
    RetryAfter,
    Snooze,
    Worker,
    retry,
)
from runlater.worker import DequeueMode


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _job_in(client: Client, job_id: str, *states: JobState) -> Job | None:
    job = client.get_job(job_id)
    return job if job is not None and job.state in states else None


def _job_with(client: Client, job_id: str, state: JobState, status_part: str) -> Job | None:
    """The job once it is in `state` and its custom status mentions `status_part`."""
    job = _job_in(client, job_id, state)
    return job if job is not None and status_part in job.custom_status else None


def _fast_worker(client: Client | AsyncClient | str, mode: DequeueMode, **kw: object) -> Worker:
    # Short polls and grace keep the tests quick; production defaults are longer.
    kw.setdefault("poll_wait", timedelta(milliseconds=500))
    kw.setdefault("shutdown_grace", timedelta(seconds=5))
    return Worker(client, dequeue_mode=mode, **kw)  # type: ignore[arg-type]


def _async_client(server_url: str, mode: DequeueMode) -> AsyncClient:
    """An AsyncClient that can carry the worker's mode (streams need HTTP/2)."""
    return AsyncClient(server_url, http_version="2" if mode == "stream" else None)


def test_sync_handler_success_sets_custom_status(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue()
    app = _fast_worker(client, dequeue_mode)
    seen: list[DequeuedJob] = []

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        seen.append(job)
        return f"processed {job.body.decode()}"

    ids = [client.enqueue(q, f"job{i}".encode()) for i in range(5)]
    with running(app):
        done = [
            wait_for(functools.partial(_job_in, client, job_id, JobState.SUCCEEDED))
            for job_id in ids
        ]
    assert all("processed job" in j.custom_status for j in done)
    assert sorted(j.body for j in seen) == [f"job{i}".encode() for i in range(5)]
    assert all(j.queue == q and j.attempt == 1 for j in seen)


def test_async_handlers_run_concurrently_and_acks_are_batched(
    client: Client, server_url: str, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue()
    app = _fast_worker(_async_client(server_url, dequeue_mode), dequeue_mode, concurrency=20)
    active = 0
    peak = 0

    @app.handler(q)
    async def handle(job: DequeuedJob) -> None:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.05)
        active -= 1

    ids = client.enqueue_many([JobSpec(q, str(i).encode()) for i in range(100)])
    with running(app):
        wait_for(lambda: client.count_jobs(q, state=JobState.SUCCEEDED) == 100, timeout=30)
    assert peak > 1, "jobs should overlap with concurrency 20"
    assert peak <= 20
    assert len(ids) == 100


@dataclass
class _DequeueTally:
    """Dequeue calls in flight and the jobs they ask for; `running` is kept by the handler.

    Touched only on the worker's event loop; the test thread reads it.
    """

    in_flight: int = 0
    max_in_flight: int = 0
    requested: int = 0
    running: int = 0
    # One (limit, slots already spoken for: others' limits + handlers running) per call.
    calls: list[tuple[int, int]] = field(default_factory=list)


class _TallyingClient(AsyncClient):
    """An AsyncClient that keeps a _DequeueTally of the worker's Dequeue calls."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.tally = _DequeueTally()

    async def dequeue(self, queue: str, *, limit: int = 1, **kw: Any) -> DequeueResult:
        t = self.tally
        t.calls.append((limit, t.requested + t.running))
        t.in_flight += 1
        t.max_in_flight = max(t.max_in_flight, t.in_flight)
        t.requested += limit
        try:
            return await super().dequeue(queue, limit=limit, **kw)
        finally:
            t.in_flight -= 1
            t.requested -= limit


def _tallied_worker(
    server_url: str, queue: str, *, sleep: float, **kw: object
) -> tuple[Worker, _TallyingClient, list[str]]:
    """A worker whose async handler sleeps, counts itself running and records each job id."""
    spy = _TallyingClient(server_url)
    # A stop waits for the long polls in flight: keep them short.
    app = _fast_worker(spy, "poll", poll_wait=timedelta(milliseconds=200), **kw)
    ran: list[str] = []

    @app.handler(queue)
    async def handle(job: DequeuedJob) -> None:
        ran.append(job.job_id)
        spy.tally.running += 1
        await asyncio.sleep(sleep)
        spy.tally.running -= 1

    return app, spy, ran


def _run_until_all_succeeded(
    client: Client, server_url: str, queue: str, jobs: int, **kw: Any
) -> tuple[_TallyingClient, list[str], list[str]]:
    """Enqueues `jobs` jobs and runs a tallied worker until every one has succeeded.

    Returns the worker's spy, the job ids its handler ran and the ids enqueued.
    """
    ids = client.enqueue_many([JobSpec(queue, str(i).encode()) for i in range(jobs)])
    app, spy, ran = _tallied_worker(server_url, queue, **kw)
    with running(app):
        wait_for(lambda: client.count_jobs(queue, state=JobState.SUCCEEDED) == jobs)
    return spy, ran, ids


def test_keeps_several_dequeues_in_flight_when_concurrency_holds_several_batches(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    # Room for four batches: up to four calls in flight.
    spy, ran, ids = _run_until_all_succeeded(
        client, server_url, make_queue(), 60, sleep=0.005, concurrency=8, batch_size=2
    )
    assert 2 <= spy.tally.max_in_flight <= 4
    assert all(limit + spoken_for <= 8 for limit, spoken_for in spy.tally.calls)
    assert Counter(ran) == Counter(ids), "every job runs exactly once"


@pytest.mark.parametrize(("concurrency", "batch_size"), [(4, None), (5, 3)])
def test_keeps_one_dequeue_in_flight_when_concurrency_holds_less_than_two_batches(
    client: Client,
    server_url: str,
    make_queue: QueueFactory,
    concurrency: int,
    batch_size: int | None,
) -> None:
    spy, ran, ids = _run_until_all_succeeded(
        client,
        server_url,
        make_queue(),
        20,
        sleep=0.005,
        concurrency=concurrency,
        batch_size=batch_size,
    )
    assert spy.tally.max_in_flight == 1
    assert Counter(ran) == Counter(ids)


def test_dequeue_calls_together_never_ask_for_more_than_the_free_slots(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    # Three pullers of 2 on 7 slots: the odd slot must be asked for alone, never as a third.
    spy, ran, ids = _run_until_all_succeeded(
        client, server_url, make_queue(), 40, sleep=0.01, concurrency=7, batch_size=2
    )
    calls = spy.tally.calls
    assert all(1 <= limit <= 2 for limit, _ in calls), calls
    assert all(limit + spoken_for <= 7 for limit, spoken_for in calls), calls
    assert any(limit < 2 for limit, _ in calls), "some call should have had one slot to fill"
    assert spy.tally.max_in_flight > 1
    assert Counter(ran) == Counter(ids)


def test_graceful_stop_with_several_dequeues_in_flight_finishes_and_acks_every_job(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    q = make_queue()
    ids = client.enqueue_many([JobSpec(q, str(i).encode(), attempts_allowed=4) for i in range(3)])
    spy = _TallyingClient(server_url)
    app = _fast_worker(spy, "poll", concurrency=8, batch_size=2)  # four pullers, 5 slots left over
    started: list[str] = []
    release = threading.Event()

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        started.append(job.job_id)
        release.wait(10)
        return "finished during stop"

    errors: list[BaseException] = []

    def run() -> None:
        try:
            app.run(handle_signals=False)
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    # Not helpers.running(): its stop() on exit would be a second one, i.e. a forced stop.
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        wait_for(lambda: len(started) == 3 and spy.tally.in_flight >= 2)
    finally:
        app.stop()
        # The loop sees the stop before these handlers' results: their acks come after it.
        release.set()
    thread.join(timeout=10)
    assert not thread.is_alive(), "worker did not stop"
    assert not errors, errors
    jobs = client.get_jobs(ids).jobs
    assert len(jobs) == 3
    assert all(
        j.state is JobState.SUCCEEDED and "finished during stop" in j.custom_status for j in jobs
    ), jobs
    assert client.count_jobs(q, state=JobState.RUNNING) == 0


def test_failure_uses_queue_policy_and_retry_after_delays(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue(retry_policy=QueueRetryPolicy(timedelta(hours=2), 5, timedelta(hours=2)))
    app = _fast_worker(client, dequeue_mode)

    @app.handler(q)
    def handle(job: DequeuedJob) -> None:
        if job.body == b"plain":
            raise ValueError("bad input")
        raise RetryAfter(timedelta(minutes=10), "try later")

    plain = client.enqueue(q, b"plain")
    delayed = client.enqueue(q, b"delayed")
    with running(app):
        p = wait_for(lambda: _job_with(client, plain, JobState.PENDING, "bad input"))
        d = wait_for(lambda: _job_with(client, delayed, JobState.PENDING, "try later"))
    # Plain exception: no retry_delay sent, so the queue's 2 h policy decided.
    assert p.custom_status == "bad input"  # the message alone, as in TS and Java
    assert p.attempts_remaining == 10
    assert p.run_after is not None and p.run_after > _now() + timedelta(minutes=110)
    # RetryAfter: the worker's delay overrides the policy.
    assert d.run_after is not None
    assert _now() + timedelta(minutes=8) < d.run_after < _now() + timedelta(minutes=11)
    assert d.attempts_remaining == 10


def _later_queue(make_queue: QueueFactory) -> str:
    """A queue whose failed attempts come back in an hour: the test sees them PENDING."""
    return make_queue(retry_policy=QueueRetryPolicy(timedelta(hours=1), 1, timedelta(hours=1)))


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("returned", "type_name"), [({"ok": True}, "dict"), (42, "int"), (b"raw", "bytes")]
)
def test_a_handler_returning_what_it_may_not_fails_the_attempt_and_says_why(
    client: Client,
    make_queue: QueueFactory,
    is_async: bool,
    returned: object,
    type_name: str,
    dequeue_mode: DequeueMode,
) -> None:
    q = _later_queue(make_queue)
    app = _fast_worker(client, dequeue_mode)

    async def handle_async(job: DequeuedJob) -> Any:
        return returned

    def handle_sync(job: DequeuedJob) -> Any:
        return returned

    app.register(q, handle_async if is_async else handle_sync)
    job_id = client.enqueue(q, b"x", attempts_allowed=3)
    with running(app):
        # Not left RUNNING until the claim times out: a failed attempt, reported at once.
        job = wait_for(lambda: _job_with(client, job_id, JobState.PENDING, "a handler may return"))
    assert f"returned {type_name}; a handler may return None, a str" in job.custom_status
    assert job.attempts_remaining == 2


def test_retry_after_in_seconds_delays_its_job_and_leaves_the_others_alone(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue()
    app = _fast_worker(client, dequeue_mode, concurrency=10)

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        if job.body == b"int":
            raise RetryAfter(600, "ten minutes")
        if job.body == b"float":
            raise RetryAfter(90.5, "ninety seconds")
        return "done"

    ids = client.enqueue_many(
        [JobSpec(q, b"int"), JobSpec(q, b"float")] + [JobSpec(q, b"%d" % i) for i in range(48)]
    )
    with running(app):
        wait_for(lambda: client.count_jobs(q, state=JobState.SUCCEEDED) == 48)
        by_int = wait_for(lambda: _job_with(client, ids[0], JobState.PENDING, "ten minutes"))
        by_float = wait_for(lambda: _job_with(client, ids[1], JobState.PENDING, "ninety seconds"))
    # `running` re-raises what stopped the worker: it kept going.
    assert by_int.run_after is not None and by_float.run_after is not None
    assert _now() + timedelta(seconds=590) < by_int.run_after <= _now() + timedelta(seconds=600)
    assert _now() + timedelta(seconds=80) < by_float.run_after <= _now() + timedelta(seconds=91)


def test_a_retry_policy_that_raises_leaves_the_delay_to_the_queue(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = _later_queue(make_queue)

    def broken(attempt: int) -> timedelta:
        raise ZeroDivisionError("policy bug")

    app = _fast_worker(client, dequeue_mode, retry_policy=retry.RetryPolicy(broken))

    @app.handler(q)
    def handle(job: DequeuedJob) -> None:
        raise RuntimeError("transient")

    job_id = client.enqueue(q, b"x")
    with running(app):
        job = wait_for(lambda: _job_with(client, job_id, JobState.PENDING, "transient"))
    assert job.run_after is not None and job.run_after > _now() + timedelta(minutes=50)


def test_a_handler_failure_is_logged_once_with_its_traceback(
    client: Client,
    make_queue: QueueFactory,
    dequeue_mode: DequeueMode,
    caplog: pytest.LogCaptureFixture,
) -> None:
    q = _later_queue(make_queue)
    app = _fast_worker(client, dequeue_mode)

    def parse(body: bytes) -> int:
        return int(body)

    @app.handler(q)
    def handle(job: DequeuedJob) -> None:
        parse(job.body)

    caplog.set_level(logging.WARNING, logger="runlater.worker")
    job_id = client.enqueue(q, b"not a number")
    with running(app):
        wait_for(lambda: _job_with(client, job_id, JobState.PENDING, "invalid literal"))
    failures = [r for r in caplog.records if job_id in r.getMessage()]
    assert len(failures) == 1, [r.getMessage() for r in caplog.records]
    [record] = failures
    assert record.levelno == logging.WARNING
    text = caplog.text
    assert "Traceback" in text and "in parse" in text and "invalid literal for int()" in text


def test_worker_retry_policy_and_do_not_retry(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue()
    app = _fast_worker(client, dequeue_mode, retry_policy=retry.constant(timedelta(minutes=3)))

    @app.handler(q)
    def handle(job: DequeuedJob) -> None:
        if job.body == b"fatal":
            raise DoNotRetry("cannot ever work")
        raise RuntimeError("transient")

    fatal = client.enqueue(q, b"fatal")
    transient = client.enqueue(q, b"transient")
    with running(app):
        f = wait_for(lambda: _job_in(client, fatal, JobState.FAILED))
        t = wait_for(lambda: _job_with(client, transient, JobState.PENDING, "transient"))
    assert "cannot ever work" in f.custom_status
    assert f.attempts_remaining == 10  # failed for good with attempts left
    assert t.run_after is not None
    assert _now() + timedelta(minutes=2) < t.run_after < _now() + timedelta(minutes=4)


def test_failure_on_the_last_attempt_fails_the_job(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue(
        retry_policy=QueueRetryPolicy(timedelta(milliseconds=10), 1, timedelta(milliseconds=10))
    )
    app = _fast_worker(client, dequeue_mode)
    attempts: list[int] = []

    @app.handler(q)
    def handle(job: DequeuedJob) -> None:
        attempts.append(job.attempt)
        raise RuntimeError(f"attempt {job.attempt}")

    job_id = client.enqueue(q, b"x", attempts_allowed=3)
    with running(app):
        failed = wait_for(lambda: _job_in(client, job_id, JobState.FAILED))
    assert attempts == [1, 2, 3]
    assert failed.attempts_remaining == 0


def test_snooze_reschedules_without_charging_an_attempt(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue()
    app = _fast_worker(client, dequeue_mode)

    @app.handler(q)
    def handle(job: DequeuedJob) -> Snooze:
        return Snooze(timedelta(minutes=30), "see you later")

    job_id = client.enqueue(q, b"cron", attempts_allowed=2)
    with running(app):
        job = wait_for(lambda: _job_with(client, job_id, JobState.PENDING, "see you later"))
    assert job.attempts_remaining == 2
    assert job.run_after is not None
    assert _now() + timedelta(minutes=29) < job.run_after < _now() + timedelta(minutes=31)


def test_long_job_keeps_its_claim_by_checkpointing(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    # A 300 ms claim, a 1.5 s job: without renewal the claim would time out several times.
    fast = QueueRetryPolicy(timedelta(milliseconds=10), 1, timedelta(milliseconds=10))
    q = make_queue(claim_timeout=timedelta(milliseconds=300), retry_policy=fast)
    app = _fast_worker(client, dequeue_mode)
    runs: list[int] = []

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        runs.append(job.attempt)
        time.sleep(1.5)
        return "finished"

    job_id = client.enqueue(q, b"long")
    with running(app):
        done = wait_for(lambda: _job_in(client, job_id, JobState.SUCCEEDED))
    assert runs == [1], "the job must not have been handed out again"
    assert done.attempts_remaining == 10
    assert "finished" in done.custom_status


def test_stop_lets_running_jobs_finish_within_the_grace(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue()
    app = _fast_worker(client, dequeue_mode, shutdown_grace=timedelta(seconds=10))
    started = threading.Event()

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        started.set()
        time.sleep(0.5)
        return "made it"

    job_id = client.enqueue(q, b"x")
    with running(app):
        assert started.wait(10)
        # leaving the block calls stop() while the job is still sleeping
    job = client.get_job(job_id)
    assert job is not None and job.state is JobState.SUCCEEDED
    assert "made it" in job.custom_status


def test_stop_releases_jobs_still_running_after_the_grace(
    client: Client, make_queue: QueueFactory, dequeue_mode: DequeueMode
) -> None:
    q = make_queue()
    app = _fast_worker(client, dequeue_mode, shutdown_grace=timedelta(milliseconds=200))
    started = threading.Event()
    cancelled = threading.Event()

    @app.handler(q)
    async def handle(job: DequeuedJob) -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    job_id = client.enqueue(q, b"x", attempts_allowed=3)
    t0 = time.monotonic()
    with running(app):
        assert started.wait(10)
    assert time.monotonic() - t0 < 10
    assert cancelled.is_set()
    job = client.get_job(job_id)
    assert job is not None and job.state is JobState.PENDING
    assert job.attempts_remaining == 3  # released: the attempt is not charged
    assert job.custom_status == "", "a release appends nothing to the custom status"


def test_sigterm_to_runlater_worker_cli_releases_the_running_job(
    client: Client,
    server_url: str,
    make_queue: QueueFactory,
    tmp_path: Path,
    dequeue_mode: DequeueMode,
) -> None:
    q = make_queue()
    job_id = client.enqueue(q, b"blocking", attempts_allowed=4)
    started = tmp_path / "started"
    env = dict(
        os.environ,
        RUNLATER_URL=server_url,
        APP_QUEUE=q,
        APP_GRACE_MS="300",
        APP_STARTED_FILE=str(started),
        APP_DEQUEUE_MODE=dequeue_mode,
    )
    cmd = cli_command() + ["slow_app:app", "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=APPS, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(started.exists, timeout=20)  # the handler is running
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    assert code == 0, stderr
    job = client.get_job(job_id)
    assert job is not None, stderr
    assert (job.state, job.attempts_remaining) == (JobState.PENDING, 4), (job, stderr)


def test_cli_worker_processes_jobs(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    q = make_queue()
    job_id = client.enqueue(q, b"quick")
    env = dict(os.environ, RUNLATER_URL=server_url, APP_QUEUE=q, APP_GRACE_MS="5000")
    proc = subprocess.Popen(
        cli_command() + ["slow_app:app"], cwd=APPS, env=env, stderr=subprocess.DEVNULL
    )
    try:
        done = wait_for(lambda: _job_in(client, job_id, JobState.SUCCEEDED), timeout=20)
        assert "quick done" in done.custom_status
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stop_releases_more_jobs_than_one_checkpoint_may_carry(
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    # The server takes at most 1,000 checkpoints per call; 1,001 running jobs are released.
    q = make_queue()
    jobs = 1001
    app = _fast_worker(client, "stream", concurrency=jobs, shutdown_grace=timedelta(0))
    started = 0

    @app.handler(q)
    async def handle(job: DequeuedJob) -> None:
        nonlocal started
        started += 1
        await asyncio.sleep(60)

    for first in (0, 1000):
        client.enqueue_many([JobSpec(q, b"x", attempts_allowed=3)] * min(1000, jobs - first))
    with running(app):
        wait_for(lambda: started == jobs)
    assert client.count_jobs(q, state=JobState.PENDING) == jobs
    released = client.scan_jobs(q, limit=1000).jobs
    assert all(j.attempts_remaining == 3 for j in released), "no attempt charged"
