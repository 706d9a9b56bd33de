"""runlater-worker --url (default $RUNLATER_URL), --concurrency and --queue: they override
the app's Worker, and a bad value stops the command at once with a message naming it."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
from helpers import APPS, QueueFactory, cli_command, wait_for

from runlater import Client, JobState


def _env(queues: list[str], **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RUNLATER_URL"}
    return {**env, "APP_QUEUES": ",".join(queues), **extra}


def _status(client: Client, job_id: str) -> str | None:
    job = client.get_job(job_id)
    assert job is not None
    return job.custom_status if job.state is JobState.SUCCEEDED else None


@pytest.mark.parametrize("url_from", ["--url", "RUNLATER_URL"])
def test_flags_pick_the_server_the_queues_and_the_concurrency(
    server_url: str, client: Client, make_queue: QueueFactory, url_from: str
) -> None:
    chosen, other = make_queue(), make_queue()
    flags = ["--queue", chosen, "--concurrency", "3"]
    env = _env([chosen, other])
    if url_from == "--url":
        flags += ["--url", server_url]
    else:
        env["RUNLATER_URL"] = server_url
    ran, skipped = client.enqueue(chosen, b"x"), client.enqueue(other, b"x")
    proc = subprocess.Popen(
        [*cli_command(), "two_queue_app:app", *flags], cwd=APPS, env=env, stderr=subprocess.PIPE
    )
    try:
        # The app's own server (port 9) is not there: the job ran only through the flag.
        assert wait_for(lambda: _status(client, ran)) == "concurrency 3"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr.decode()
    assert f"started on {chosen} at {server_url}" in stderr.decode()
    job = client.get_job(skipped)
    assert job is not None and job.state is JobState.PENDING


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        (
            ["--concurrency", "0"],
            {},
            "argument --concurrency: must be a whole number of at least 1, not '0'",
        ),
        (
            ["--concurrency", "two"],
            {},
            "argument --concurrency: must be a whole number of at least 1, not 'two'",
        ),
        (
            ["--url", "127.0.0.1:8080"],
            {},
            "argument --url: must be an http:// or https:// URL, not '127.0.0.1:8080'",
        ),
        (
            [],
            {"RUNLATER_URL": "localhost"},
            "$RUNLATER_URL must be an http:// or https:// URL, not 'localhost'",
        ),
        (
            ["--log-level", "chatty"],
            {},
            (
                "argument --log-level: invalid choice: 'chatty' (choose from 'debug', 'info', "
                "'warning', 'error', 'critical')"
            ),
        ),
        (
            ["--queue", "q_a", "--queue", "nope"],
            {},
            "--queue: no handler registered for queue(s) 'nope'; registered: 'q_a', 'q_b'",
        ),
    ],
)
def test_a_bad_flag_stops_the_command_naming_it(
    flags: list[str], env: dict[str, str], message: str
) -> None:
    result = subprocess.run(
        [*cli_command(), "two_queue_app:app", *flags],
        cwd=APPS,
        env=_env(["q_a", "q_b"], **env),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"runlater-worker: error: {message}"
