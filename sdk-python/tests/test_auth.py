"""API tokens against a server with auth on: what is refused, what works, and that the
token, from the argument or RUNLATER_TOKEN, reaches every call (the worker's stream too)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import AuthServer
from helpers import APPS, SHORT_POLL, cli_command, running, wait_for

from runlater import AsyncClient, Client, ErrorReason, JobState, RunlaterError, Worker
from runlater._gen.v1 import token_service_pb2
from runlater._gen.v1.token_service_connect import TokenServiceClientSync
from runlater.worker import DequeueMode

MakeToken = Callable[..., str]


@pytest.fixture
def admin(auth_server: AuthServer) -> Iterator[Client]:
    with Client(auth_server.url, token=auth_server.admin_token) as c:
        yield c


@pytest.fixture
def make_token(auth_server: AuthServer) -> Iterator[MakeToken]:
    """Makes tokens on the auth server (TokenService, which the SDK does not wrap)."""
    tokens = TokenServiceClientSync(auth_server.url)
    headers = {"authorization": f"Bearer {auth_server.admin_token}"}

    def make(*scopes: str, queues: tuple[str, ...] = ()) -> str:
        req = token_service_pb2.CreateTokenRequest(
            name=f"test-{'-'.join(scopes)}", scopes=scopes, queues=queues
        )
        return tokens.create_token(req, headers=headers).secret_token

    yield make
    tokens.close()


@pytest.fixture
def queue(admin: Client) -> Iterator[str]:
    name = f"t_auth_{secrets.token_hex(4)}"
    admin.create_queue(name)
    yield name
    admin.delete_queue(name)


def _unknown_token() -> str:
    """Well-formed, in no store."""
    return f"rl_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"


def test_a_call_without_a_token_is_unauthenticated(auth_server: AuthServer, queue: str) -> None:
    # "": no token, whatever RUNLATER_TOKEN says.
    with Client(auth_server.url, token="") as c, pytest.raises(RunlaterError) as caught:
        c.enqueue(queue, b"x")
    assert caught.value.code == "unauthenticated"
    assert caught.value.reason == ErrorReason.UNAUTHENTICATED


def test_an_unknown_token_is_unauthenticated_and_never_shown(
    auth_server: AuthServer, queue: str
) -> None:
    token = _unknown_token()
    with Client(auth_server.url, token=token) as c:
        assert token not in repr(c.options)
        with pytest.raises(RunlaterError) as caught:
            c.enqueue(queue, b"x")
    assert caught.value.reason == ErrorReason.UNAUTHENTICATED
    assert token not in str(caught.value)
    assert token not in repr(caught.value)


def test_a_token_without_the_scope_is_denied_naming_the_scope(
    auth_server: AuthServer, make_token: MakeToken, queue: str
) -> None:
    with Client(auth_server.url, token=make_token("read")) as c:
        assert c.count_jobs(queue) == 0  # what the token may do works
        with pytest.raises(RunlaterError) as caught:
            c.enqueue(queue, b"x")
    assert caught.value.code == "permission_denied"
    assert caught.value.reason == ErrorReason.PERMISSION_DENIED
    assert "needs the enqueue scope" in caught.value.message


@pytest.mark.parametrize("given", ["url", "client"])
def test_a_worker_with_a_work_token_takes_and_acks_jobs(
    auth_server: AuthServer,
    make_token: MakeToken,
    admin: Client,
    queue: str,
    dequeue_mode: DequeueMode,
    given: str,
) -> None:
    with Client(auth_server.url, token=make_token("enqueue")) as producer:
        job_ids = [producer.enqueue(queue, str(i)) for i in range(3)]
    work = make_token("work", queues=(queue,))
    worker = (
        Worker(auth_server.url, token=work, dequeue_mode=dequeue_mode, poll_wait=SHORT_POLL)
        if given == "url"
        else Worker(
            Client(auth_server.url, token=work), dequeue_mode=dequeue_mode, poll_wait=SHORT_POLL
        )
    )
    worker.register(queue, lambda job: f"done {job.body.decode()}")
    with running(worker):
        wait_for(lambda: _all_succeeded(admin, job_ids))
    assert worker.dequeue_mode == dequeue_mode  # the stream (DequeueStream) or polls
    assert [j.custom_status for j in admin.get_jobs(job_ids).jobs] == ["done 0", "done 1", "done 2"]


def test_the_token_comes_from_runlater_token_when_not_given(
    auth_server: AuthServer, queue: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNLATER_TOKEN", f" {auth_server.admin_token}\n")  # trimmed
    with Client(auth_server.url) as c:
        c.enqueue(queue, b"sync")

    async def enqueue_async() -> None:
        async with AsyncClient(auth_server.url) as c:
            await c.enqueue(queue, b"async")

    asyncio.run(enqueue_async())
    worker = Worker(auth_server.url, dequeue_mode="stream")
    worker.register(queue, lambda job: None)
    with Client(auth_server.url) as c, running(worker):
        wait_for(lambda: c.count_jobs(queue, state=JobState.SUCCEEDED) == 2)


@pytest.mark.parametrize("source", ["env", "file"])
def test_runlater_worker_reads_the_token_from_the_env_or_a_file(
    auth_server: AuthServer, admin: Client, queue: str, tmp_path: Path, source: str
) -> None:
    job_id = admin.enqueue(queue, b"quick")
    env = dict(os.environ, RUNLATER_URL=auth_server.url, APP_QUEUE=queue)
    env.pop("RUNLATER_TOKEN", None)
    args = ["slow_app:app", "--log-level", "warning"]
    if source == "env":
        env["RUNLATER_TOKEN"] = auth_server.admin_token
    else:
        token_file = tmp_path / "token"
        token_file.write_text(auth_server.admin_token + "\n")
        args += ["--token-file", str(token_file)]
    proc = subprocess.Popen(
        cli_command() + args, cwd=APPS, env=env, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for(lambda: _all_succeeded(admin, [job_id]), timeout=20)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    assert auth_server.admin_token not in proc.stderr.read()


def test_runlater_worker_refuses_a_missing_token_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    done = subprocess.run(
        [*cli_command(), "slow_app:app", "--token-file", str(missing)],
        check=False,
        cwd=APPS,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode != 0
    assert f"--token-file {missing}: No such file or directory" in done.stderr


def test_a_token_that_is_not_a_header_value_is_refused_without_showing_it() -> None:
    with pytest.raises(ValueError, match="printable ASCII") as caught:
        Client("http://127.0.0.1:1", token="rl_secret\nx")
    assert "rl_secret" not in str(caught.value)


def test_an_authorization_header_given_wins_over_runlater_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNLATER_TOKEN", "rl_from_env")
    with Client("http://127.0.0.1:1", headers={"Authorization": "Bearer mine"}) as c:
        assert c.options.call_headers == {"Authorization": "Bearer mine"}
    with Client("http://127.0.0.1:1") as c:
        assert c.options.call_headers == {"authorization": "Bearer rl_from_env"}


def _all_succeeded(client: Client, job_ids: list[str]) -> bool:
    return all(j.state == JobState.SUCCEEDED for j in client.get_jobs(job_ids).jobs)
