"""Fixtures: a real runlater server, clients, per-test queues and a polling helper.

The server is started once per session from this checkout's scripts/runlater (found
relative to this file, so any clone works), or RUNLATER_URL names one already running.
The auth and TLS tests start servers of their own (with --auth, --tls-cert...).
"""

from __future__ import annotations

import os
import queue as queue_mod
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
from helpers import QueueFactory

from runlater import Client, QueueConfig

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_SCRIPT = REPO_ROOT / "scripts" / "runlater"
STARTUP_TIMEOUT_S = 60.0  # the first start may install Node (scripts/node-env.sh)


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    if os.environ.get("RUNLATER_URL"):
        yield os.environ["RUNLATER_URL"].rstrip("/")
        return
    with serve() as url:
        yield url


@dataclass(frozen=True)
class AuthServer:
    url: str
    admin_token: str


@pytest.fixture(scope="session")
def auth_server() -> Iterator[AuthServer]:
    """A server of its own with auth on, its bootstrap admin token made here."""
    admin = f"rl_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}"  # the server's format
    with serve("--auth", env={"RUNLATER_ADMIN_TOKEN": admin}) as url:
        yield AuthServer(url, admin)


@pytest.fixture(scope="session")
def tls_certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A throwaway CA with server and client certificates (scripts/test-certs.sh): ca.pem,
    server.pem, server-key.pem (127.0.0.1, ::1, localhost), client.pem, client-key.pem."""
    certs = tmp_path_factory.mktemp("certs")
    subprocess.run([str(REPO_ROOT / "scripts" / "test-certs.sh"), str(certs)], check=True)
    return certs


def _tls_args(certs: Path) -> list[str]:
    return ["--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server-key.pem")]


@pytest.fixture(scope="session")
def tls_server(tls_certs: Path) -> Iterator[str]:
    """A server over https:// with a certificate of the test CA; yields its URL."""
    with serve(*_tls_args(tls_certs)) as url:
        yield url


@pytest.fixture(scope="session")
def mtls_server(tls_certs: Path) -> Iterator[str]:
    """An https:// server that takes only clients with a certificate of the test CA."""
    with serve(*_tls_args(tls_certs), "--tls-client-ca", str(tls_certs / "ca.pem")) as url:
        yield url


@contextmanager
def serve(*args: str, env: Mapping[str, str] | None = None) -> Iterator[str]:
    """Runs `scripts/runlater serve` on a free loopback port with `args`; yields its URL."""
    # stderr: JSON logs (RUNLATER_URL and a manual server to see them); kept in a file so
    # that a server which exits before listening can say why.
    with tempfile.TemporaryFile(mode="w+") as stderr:
        proc = subprocess.Popen(
            [str(SERVER_SCRIPT), "serve", "--store", "memory", "--port", "0", "--host", "127.0.0.1"]
            + list(args),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env={**os.environ, **(env or {})},
        )
        try:
            yield _read_listen_url(proc, stderr)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()


def _read_listen_url(proc: subprocess.Popen[str], stderr: IO[str]) -> str:
    """Waits for "runlater listening on URL" on the server's stdout."""
    lines: queue_mod.Queue[str] = queue_mod.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    prefix = "runlater listening on "
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            stderr.seek(0)
            raise RuntimeError(
                f"runlater server exited with {proc.returncode} before listening: "
                + stderr.read()[-2000:]
            )
        try:
            line = lines.get(timeout=0.1)
        except queue_mod.Empty:
            continue
        if line.startswith(prefix):
            return line[len(prefix) :].strip()
    raise RuntimeError(f"runlater server did not print {prefix!r} within {STARTUP_TIMEOUT_S}s")


@pytest.fixture(params=["poll", "stream"])
def dequeue_mode(request: pytest.FixtureRequest) -> str:
    """Runs a worker test once per way of taking jobs (Worker(dequeue_mode=...))."""
    mode: str = request.param
    return mode


@pytest.fixture
def client(server_url: str) -> Iterator[Client]:
    with Client(server_url) as c:
        yield c


@pytest.fixture
def make_queue(client: Client, request: pytest.FixtureRequest) -> Iterator[QueueFactory]:
    """Creates queues unique to this test (name + random suffix); deletes them after."""
    created: list[str] = []
    base = "".join(ch if ch.isalnum() else "_" for ch in request.node.name)[:40]

    def make(**config: object) -> str:
        name = f"t_{base}_{secrets.token_hex(4)}"
        client.create_queue(name, QueueConfig(**config) if config else None)  # type: ignore[arg-type]
        created.append(name)
        return name

    yield make
    for name in created:
        client.delete_queue(name)
