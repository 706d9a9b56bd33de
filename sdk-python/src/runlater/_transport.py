"""Connection settings shared by Client and AsyncClient, and the generated stubs they wrap.

connectrpc is beta and has changed APIs between minor releases, so it is pinned exactly
and touched only here and in _errors.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal, TypedDict, TypeVar

import pyqwest
from connectrpc.protocol import ProtocolType

from . import _tls
from ._gen.v1.job_service_connect import JobServiceClient, JobServiceClientSync
from ._gen.v1.queue_service_connect import QueueServiceClient, QueueServiceClientSync
from ._gen.v1.schedule_service_connect import ScheduleServiceClient, ScheduleServiceClientSync
from ._gen.v1.worker_service_connect import WorkerServiceClient, WorkerServiceClientSync
from ._gen.v1.workflow_service_connect import WorkflowServiceClient, WorkflowServiceClientSync
from ._tls import Tls

Protocol = Literal["connect", "grpc", "grpc-web"]
HttpVersion = Literal["1.1", "2"]

_PROTOCOLS: dict[str, ProtocolType] = {
    "connect": ProtocolType.CONNECT,
    "grpc": ProtocolType.GRPC,
    "grpc-web": ProtocolType.GRPC_WEB,
}

DEFAULT_TIMEOUT = timedelta(seconds=30)

# Shared by every SDK and the CLI.
TOKEN_ENV = "RUNLATER_TOKEN"
# What an HTTP header value may hold (RFC 9110 visible ASCII), so a stray newline or space
# fails here with a clear message, not in the HTTP library with the token in its text.
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")


@dataclass(frozen=True)
class Options:
    """How to reach a runlater server.

    url: base URL, e.g. "http://127.0.0.1:8080".
    protocol: "connect" (default), "grpc" or "grpc-web".
    timeout: deadline of each call; long-poll dequeues get their wait added on top.
    headers: sent with every call (an authorization header here wins over the token).
    http_version: "1.1" or "2" (over http:// that is h2c with prior knowledge: the runlater
        server speaks both on one port; over https:// the one ALPN offers). None: "2" for
        gRPC (which needs it), else "1.1".
    token: API token sent as "authorization: Bearer ..." with every call; never in the repr.
    tls: what an https:// client trusts and presents; None: the system trust store.
    """

    url: str
    protocol: Protocol = "connect"
    timeout: timedelta | None = DEFAULT_TIMEOUT
    headers: Mapping[str, str] = field(default_factory=dict)
    http_version: HttpVersion | None = None
    token: str | None = field(default=None, repr=False)
    tls: Tls | None = None
    # headers plus the token's authorization, built once for every call to send.
    call_headers: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.protocol not in _PROTOCOLS:
            raise ValueError(f"protocol must be one of {sorted(_PROTOCOLS)}, not {self.protocol!r}")
        if self.http_version not in (None, "1.1", "2"):
            raise ValueError(f'http_version must be "1.1", "2" or None, not {self.http_version!r}')
        if self.protocol == "grpc" and self.http_version == "1.1":
            raise ValueError('gRPC needs HTTP/2: pass http_version="2" (or leave it unset)')
        if self.token is not None and not _TOKEN_CHARS.fullmatch(self.token):
            # Never the token itself in the message: it ends up in logs.
            raise ValueError("token must be printable ASCII without spaces or line breaks")
        if self.tls is not None and not self.https:
            raise ValueError(f"TLS settings ({self.tls}) need an https:// URL, not {self.url!r}")
        headers = dict(self.headers)
        # An authorization header given explicitly wins over the token (RUNLATER_TOKEN may
        # be set for other tools).
        if self.token is not None and "authorization" not in (k.lower() for k in headers):
            headers["authorization"] = f"Bearer {self.token}"
        object.__setattr__(self, "call_headers", headers)

    @property
    def https(self) -> bool:
        return _is_https(self.url)

    @property
    def http2(self) -> bool:
        return self.http_version == "2" or (self.http_version is None and self.protocol == "grpc")

    @property
    def streams(self) -> bool:
        """Whether calls can be bidirectional streams (DequeueStream): HTTP/2, not gRPC-Web."""
        return self.http2 and self.protocol != "grpc-web"

    def timeout_ms(self, extra: timedelta | None = None) -> int | None:
        if self.timeout is None:
            return None
        total = self.timeout + (extra or timedelta(0))
        return max(1, int(total.total_seconds() * 1000))


def _is_https(url: str) -> bool:
    return url.lower().startswith("https://")


def make_options(
    url: str,
    *,
    protocol: Protocol = "connect",
    timeout: timedelta | None = DEFAULT_TIMEOUT,
    headers: Mapping[str, str] | None = None,
    http_version: HttpVersion | None = None,
    token: str | None = None,
    tls_ca: str | os.PathLike[str] | None = None,
    tls_cert: str | os.PathLike[str] | None = None,
    tls_key: str | os.PathLike[str] | None = None,
) -> Options:
    """Options from a client's (or the Worker's) arguments, with the environment's defaults:
    RUNLATER_TOKEN for the token, RUNLATER_TLS_CA/_CERT/_KEY for an https:// URL's files
    (read and checked here). An empty string turns its variable off."""
    if token is None:
        token = os.environ.get(TOKEN_ENV, "").strip()
    url = url.rstrip("/")
    tls = None
    if _is_https(url):
        tls = _tls.load(tls_ca, tls_cert, tls_key)
    elif tls_ca or tls_cert or tls_key:
        # The variables may be set for other tools; only a file given here is a mistake.
        raise ValueError(f"tls_ca, tls_cert and tls_key need an https:// URL, not {url!r}")
    return Options(url, protocol, timeout, dict(headers or {}), http_version, token or None, tls)


@dataclass
class SyncStubs:
    jobs: JobServiceClientSync
    queues: QueueServiceClientSync
    worker: WorkerServiceClientSync
    workflows: WorkflowServiceClientSync
    schedules: ScheduleServiceClientSync
    transport: pyqwest.SyncHTTPTransport | None  # ours to close; None: pyqwest's shared one

    def close(self) -> None:
        self.jobs.close()
        self.queues.close()
        self.worker.close()
        self.workflows.close()
        self.schedules.close()
        if self.transport is not None:
            self.transport.close()


@dataclass
class AsyncStubs:
    jobs: JobServiceClient
    queues: QueueServiceClient
    worker: WorkerServiceClient
    workflows: WorkflowServiceClient
    schedules: ScheduleServiceClient
    transport: pyqwest.HTTPTransport | None  # ours to close; None: pyqwest's shared one

    async def close(self) -> None:
        await self.jobs.close()
        await self.queues.close()
        await self.worker.close()
        await self.workflows.close()
        await self.schedules.close()
        if self.transport is not None:
            await self.transport.aclose()


_T = TypeVar("_T", pyqwest.SyncHTTPTransport, pyqwest.HTTPTransport)


def _own_transport(cls: type[_T], opts: Options) -> _T | None:
    """A transport of our own where pyqwest's shared one will not do: for HTTP/2 (over
    http://, h2c with prior knowledge) and for https:// (the trust and client certificate
    given; ALPN offers only the HTTP version chosen, so `streams` says what is used)."""
    if not opts.http2 and not opts.https:
        return None
    version = pyqwest.HTTPVersion.HTTP2 if opts.http2 else pyqwest.HTTPVersion.HTTP1
    if not opts.https:
        return cls(http_version=version)
    tls = opts.tls or Tls()
    try:
        return cls(http_version=version, **tls.transport_args())
    except (ValueError, RuntimeError) as err:
        # Files the ssl module read but rustls does not take (rare: _tls checked them).
        raise ValueError(f"TLS settings {tls} refused: {err}") from err


# The largest answer (one message of a stream) a client reads, as the TypeScript and Java
# SDKs: the server's answers stay far below it (docs/limits.md), so only a broken or hostile
# server reaches it, and the call fails with RESOURCE_EXHAUSTED. connectrpc checks a stream
# message's declared length before reading it, but reads a unary answer whole first.
ANSWER_MAX_BYTES = 64 * 1024 * 1024


class _StubArgs(TypedDict):
    protocol: ProtocolType
    send_compression: None
    read_max_bytes: int


def _stub_args(opts: Options) -> _StubArgs:
    """What every stub takes besides its HTTP client. Request compression off: bodies are
    small and the server is CPU-bound on 2 cores."""
    return {
        "protocol": _PROTOCOLS[opts.protocol],
        "send_compression": None,
        "read_max_bytes": ANSWER_MAX_BYTES,
    }


def sync_stubs(opts: Options) -> SyncStubs:
    transport = _own_transport(pyqwest.SyncHTTPTransport, opts)
    http = None if transport is None else pyqwest.SyncClient(transport)
    args = _stub_args(opts)
    return SyncStubs(
        jobs=JobServiceClientSync(opts.url, http_client=http, **args),
        queues=QueueServiceClientSync(opts.url, http_client=http, **args),
        worker=WorkerServiceClientSync(opts.url, http_client=http, **args),
        workflows=WorkflowServiceClientSync(opts.url, http_client=http, **args),
        schedules=ScheduleServiceClientSync(opts.url, http_client=http, **args),
        transport=transport,
    )


def async_stubs(opts: Options) -> AsyncStubs:
    transport = _own_transport(pyqwest.HTTPTransport, opts)
    http = None if transport is None else pyqwest.Client(transport)
    args = _stub_args(opts)
    return AsyncStubs(
        jobs=JobServiceClient(opts.url, http_client=http, **args),
        queues=QueueServiceClient(opts.url, http_client=http, **args),
        worker=WorkerServiceClient(opts.url, http_client=http, **args),
        workflows=WorkflowServiceClient(opts.url, http_client=http, **args),
        schedules=ScheduleServiceClient(opts.url, http_client=http, **args),
        transport=transport,
    )
