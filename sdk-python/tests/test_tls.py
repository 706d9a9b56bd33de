"""https:// servers: the CA to trust (tls_ca or RUNLATER_TLS_CA), a client certificate for
mutual TLS, clear errors for files that are wrong and for servers that are not trusted."""

from __future__ import annotations

import asyncio
import secrets
import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from helpers import SHORT_POLL, running, wait_for

from runlater import AsyncClient, Client, JobState, UnavailableError, Worker
from runlater.worker import DequeueMode

# Short: a TLS failure must come back as an error at once, never as a wait for the deadline.
QUICK = timedelta(seconds=5)


@pytest.fixture(autouse=True)
def _no_tls_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test says what it trusts; none inherits the caller's RUNLATER_TLS_* settings."""
    for name in ("RUNLATER_TLS_CA", "RUNLATER_TLS_CERT", "RUNLATER_TLS_KEY"):
        monkeypatch.delenv(name, raising=False)


def _queue(client: Client) -> str:
    name = f"t_tls_{secrets.token_hex(4)}"
    client.create_queue(name)
    return name


@pytest.mark.parametrize(
    ("protocol", "http_version"),
    [("connect", "1.1"), ("connect", "2"), ("grpc", "2"), ("grpc-web", "1.1")],
)
def test_a_client_trusting_the_ca_calls_over_https(
    tls_server: str, tls_certs: Path, protocol: str, http_version: str
) -> None:
    assert tls_server.startswith("https://")
    with Client(
        tls_server,
        tls_ca=tls_certs / "ca.pem",
        protocol=protocol,  # type: ignore[arg-type]
        http_version=http_version,  # type: ignore[arg-type]
    ) as c:
        q = _queue(c)
        job_id = c.enqueue(q, b"over tls")
        job = c.get_job(job_id, include_body=True)
        assert job is not None and job.body == b"over tls"
        c.delete_queue(q)


def test_an_async_client_trusting_the_ca_calls_over_https(tls_server: str, tls_certs: Path) -> None:
    async def roundtrip() -> bytes:
        async with AsyncClient(tls_server, tls_ca=tls_certs / "ca.pem") as c:
            q = f"t_tls_{secrets.token_hex(4)}"
            await c.create_queue(q)
            job_id = await c.enqueue(q, b"async over tls")
            job = await c.get_job(job_id, include_body=True)
            await c.delete_queue(q)
            assert job is not None
            return job.body

    assert asyncio.run(roundtrip()) == b"async over tls"


def test_a_worker_given_the_url_and_ca_takes_and_acks_jobs(
    tls_server: str, tls_certs: Path, dequeue_mode: DequeueMode
) -> None:
    with Client(tls_server, tls_ca=tls_certs / "ca.pem") as c:
        q = _queue(c)
        job_ids = [c.enqueue(q, str(i)) for i in range(3)]
        worker = Worker(
            tls_server, tls_ca=tls_certs / "ca.pem", dequeue_mode=dequeue_mode, poll_wait=SHORT_POLL
        )
        worker.register(q, lambda job: f"done {job.body.decode()}")
        with running(worker):
            wait_for(lambda: c.count_jobs(q, state=JobState.SUCCEEDED) == 3)
        assert worker.dequeue_mode == dequeue_mode
        assert {j.custom_status for j in c.get_jobs(job_ids).jobs} == {"done 0", "done 1", "done 2"}
        c.delete_queue(q)


def test_the_ca_comes_from_runlater_tls_ca_when_not_given(
    tls_server: str, tls_certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNLATER_TLS_CA", str(tls_certs / "ca.pem"))
    with Client(tls_server, timeout=QUICK) as c:
        assert isinstance(c.list_queues(), list)


def test_a_server_whose_certificate_is_not_trusted_fails_the_call_with_the_reason(
    tls_server: str,
) -> None:
    # No CA given: the system trust store, which does not know the test CA.
    with Client(tls_server, timeout=QUICK) as c, pytest.raises(UnavailableError) as caught:
        c.list_queues()
    assert "UnknownIssuer" in caught.value.message, caught.value.message


def test_an_async_client_for_an_untrusted_server_fails_the_call_with_the_reason(
    tls_server: str,
) -> None:
    async def call() -> None:
        async with AsyncClient(tls_server, timeout=QUICK, http_version="2") as c:
            await c.list_queues()

    with pytest.raises(UnavailableError, match="UnknownIssuer"):
        asyncio.run(call())


def test_mutual_tls_works_with_the_client_certificate(
    mtls_server: str, tls_certs: Path, dequeue_mode: DequeueMode
) -> None:
    ca, cert, key = tls_certs / "ca.pem", tls_certs / "client.pem", tls_certs / "client-key.pem"
    with Client(mtls_server, tls_ca=ca, tls_cert=cert, tls_key=key) as c:
        q = _queue(c)
        c.enqueue(q, b"mtls")
        worker = Worker(
            mtls_server,
            tls_ca=ca,
            tls_cert=cert,
            tls_key=key,
            dequeue_mode=dequeue_mode,
            poll_wait=SHORT_POLL,
        )
        worker.register(q, lambda job: None)
        with running(worker):
            wait_for(lambda: c.count_jobs(q, state=JobState.SUCCEEDED) == 1)
        c.delete_queue(q)


def test_mutual_tls_without_a_client_certificate_fails_the_call_with_the_reason(
    mtls_server: str, tls_certs: Path
) -> None:
    with (
        Client(mtls_server, tls_ca=tls_certs / "ca.pem", timeout=QUICK) as c,
        pytest.raises(UnavailableError) as caught,
    ):
        c.list_queues()
    assert "CertificateRequired" in caught.value.message, caught.value.message


def test_the_client_certificate_comes_from_runlater_tls_cert_and_key(
    mtls_server: str, tls_certs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNLATER_TLS_CA", str(tls_certs / "ca.pem"))
    monkeypatch.setenv("RUNLATER_TLS_CERT", str(tls_certs / "client.pem"))
    monkeypatch.setenv("RUNLATER_TLS_KEY", str(tls_certs / "client-key.pem"))
    with Client(mtls_server, timeout=QUICK) as c:
        assert isinstance(c.list_queues(), list)


# --- files that are wrong: refused when the client is made, naming the file -----------

URL = "https://127.0.0.1:1"  # never called


def test_a_missing_ca_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pem"
    with pytest.raises(ValueError, match=f"tls_ca '{missing}': cannot read it"):
        Client(URL, tls_ca=missing)


def test_a_missing_ca_file_from_the_environment_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNLATER_TLS_CA", str(tmp_path / "nope.pem"))
    with pytest.raises(ValueError, match="tls_ca from RUNLATER_TLS_CA .*nope.pem"):
        AsyncClient(URL)


def test_a_ca_file_without_a_certificate_is_named(tmp_path: Path, tls_certs: Path) -> None:
    with pytest.raises(ValueError, match="client-key.pem'?: no PEM certificate"):
        Client(URL, tls_ca=tls_certs / "client-key.pem")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    with pytest.raises(ValueError, match="garbage.pem'?: no PEM certificate"):
        Worker(URL, tls_ca=garbage)


def test_a_client_certificate_needs_its_key(tls_certs: Path) -> None:
    with pytest.raises(ValueError, match="client.pem' was given without tls_key"):
        Client(URL, tls_cert=tls_certs / "client.pem")


def test_a_key_that_is_not_the_certificates_is_named(tls_certs: Path) -> None:
    with pytest.raises(ValueError, match="server-key.pem' is not the key of the certificate"):
        Client(URL, tls_cert=tls_certs / "client.pem", tls_key=tls_certs / "server-key.pem")


def test_a_key_file_without_a_key_is_named(tls_certs: Path, tmp_path: Path) -> None:
    not_a_key = tmp_path / "key.pem"
    shutil.copy(tls_certs / "client.pem", not_a_key)
    with pytest.raises(ValueError, match="key.pem': no PEM private key"):
        Client(URL, tls_cert=tls_certs / "client.pem", tls_key=not_a_key)


def test_tls_files_with_an_http_url_are_a_mistake(tls_certs: Path) -> None:
    with pytest.raises(ValueError, match="need an https:// URL"):
        Client("http://127.0.0.1:1", tls_ca=tls_certs / "ca.pem")


def test_the_options_show_the_files_not_their_contents(tls_certs: Path) -> None:
    with Client(URL, tls_cert=tls_certs / "client.pem", tls_key=tls_certs / "client-key.pem") as c:
        shown = repr(c.options)
    assert "client-key.pem" in shown
    assert "PRIVATE KEY" not in shown and "CERTIFICATE" not in shown
