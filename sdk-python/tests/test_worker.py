"""The Worker end to end against a real server: outcomes, retries, claims, shutdown."""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from helpers import QueueFactory, running, wait_for

from runlater import (
    AsyncClient,
    Client,
    DequeuedJob,
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

APPS = Path(__file__).resolve().parent / "apps"


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _job_in(client: Client, job_id: str, *states: JobState) -> Job | None:
    job = client.get_job(job_id)
    return job if job is not None and job.state in states else None


def _job_with(client: Client, job_id: str, state: JobState, status_part: str) -> Job | None:
    """The job once it is in `state` and its custom status mentions `status_part`."""
    job = _job_in(client, job_id, state)
    return job if job is not None and status_part in job.custom_status else None


def _fast_worker(client: Client | AsyncClient | str, **kw: object) -> Worker:
    # Short polls and grace keep the tests quick; production defaults are longer.
    kw.setdefault("poll_wait", timedelta(milliseconds=500))
    kw.setdefault("shutdown_grace", timedelta(seconds=5))
    return Worker(client, **kw)  # type: ignore[arg-type]


def test_sync_handler_success_sets_custom_status(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    app = _fast_worker(client)
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
    client: Client, server_url: str, make_queue: QueueFactory
) -> None:
    q = make_queue()
    app = _fast_worker(AsyncClient(server_url), concurrency=20)
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


def test_failure_uses_queue_policy_and_retry_after_delays(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue(retry_policy=QueueRetryPolicy(timedelta(hours=2), 5, timedelta(hours=2)))
    app = _fast_worker(client)

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
    assert "ValueError: bad input" in p.custom_status
    assert p.attempts_remaining == 10
    assert p.run_after is not None and p.run_after > _now() + timedelta(minutes=110)
    # RetryAfter: the worker's delay overrides the policy.
    assert d.run_after is not None
    assert _now() + timedelta(minutes=8) < d.run_after < _now() + timedelta(minutes=11)
    assert d.attempts_remaining == 10


def test_worker_retry_policy_and_do_not_retry(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    app = _fast_worker(client, retry_policy=retry.constant(timedelta(minutes=3)))

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
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue(
        retry_policy=QueueRetryPolicy(timedelta(milliseconds=10), 1, timedelta(milliseconds=10))
    )
    app = _fast_worker(client)
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
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    app = _fast_worker(client)

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
    client: Client, make_queue: QueueFactory
) -> None:
    # A 300 ms claim, a 1.5 s job: without renewal the claim would time out several times.
    fast = QueueRetryPolicy(timedelta(milliseconds=10), 1, timedelta(milliseconds=10))
    q = make_queue(claim_timeout=timedelta(milliseconds=300), retry_policy=fast)
    app = _fast_worker(client)
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
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    app = _fast_worker(client, shutdown_grace=timedelta(seconds=10))
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
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    app = _fast_worker(client, shutdown_grace=timedelta(milliseconds=200))
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
    assert "worker shutting down" in job.custom_status


def test_sigterm_to_runlater_worker_cli_releases_the_running_job(
    client: Client, server_url: str, make_queue: QueueFactory, tmp_path: Path
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
    )
    cmd = _cli() + ["slow_app:app", "--log-level", "warning"]
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
    proc = subprocess.Popen(_cli() + ["slow_app:app"], cwd=APPS, env=env, stderr=subprocess.DEVNULL)
    try:
        done = wait_for(lambda: _job_in(client, job_id, JobState.SUCCEEDED), timeout=20)
        assert "quick done" in done.custom_status
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _cli() -> list[str]:
    """The installed console script, falling back to python -m runlater."""
    script = Path(sys.executable).with_name("runlater-worker")
    return [str(script)] if script.exists() else [sys.executable, "-m", "runlater"]
