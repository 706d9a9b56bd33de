"""Connection settings shared by Client and AsyncClient, and the generated stubs they wrap.

connectrpc is beta and has changed APIs between minor releases, so it is pinned exactly
and touched only here and in _errors.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Literal

import pyqwest
from connectrpc.protocol import ProtocolType

from ._gen.v1.job_service_connect import JobServiceClient, JobServiceClientSync
from ._gen.v1.queue_service_connect import QueueServiceClient, QueueServiceClientSync
from ._gen.v1.worker_service_connect import WorkerServiceClient, WorkerServiceClientSync

Protocol = Literal["connect", "grpc", "grpc-web"]
HttpVersion = Literal["1.1", "2"]

_PROTOCOLS: dict[str, ProtocolType] = {
    "connect": ProtocolType.CONNECT,
    "grpc": ProtocolType.GRPC,
    "grpc-web": ProtocolType.GRPC_WEB,
}

DEFAULT_TIMEOUT = timedelta(seconds=30)


@dataclass(frozen=True)
class Options:
    """How to reach a runlater server.

    url: base URL, e.g. "http://127.0.0.1:8080".
    protocol: "connect" (default), "grpc" or "grpc-web".
    timeout: deadline of each call; long-poll dequeues get their wait added on top.
    headers: sent with every call (e.g. authorization).
    http_version: "1.1" or "2" (over http:// that is h2c with prior knowledge: the runlater
        server speaks both on one port). None: "2" for gRPC (which needs it), else "1.1".
    """

    url: str
    protocol: Protocol = "connect"
    timeout: timedelta | None = DEFAULT_TIMEOUT
    headers: Mapping[str, str] = field(default_factory=dict)
    http_version: HttpVersion | None = None

    def __post_init__(self) -> None:
        if self.protocol not in _PROTOCOLS:
            raise ValueError(f"protocol must be one of {sorted(_PROTOCOLS)}, not {self.protocol!r}")
        if self.http_version not in (None, "1.1", "2"):
            raise ValueError(f'http_version must be "1.1", "2" or None, not {self.http_version!r}')
        if self.protocol == "grpc" and self.http_version == "1.1":
            raise ValueError('gRPC needs HTTP/2: pass http_version="2" (or leave it unset)')

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


@dataclass
class SyncStubs:
    jobs: JobServiceClientSync
    queues: QueueServiceClientSync
    worker: WorkerServiceClientSync
    transport: pyqwest.SyncHTTPTransport | None  # ours to close; None: pyqwest's shared one

    def close(self) -> None:
        self.jobs.close()
        self.queues.close()
        self.worker.close()
        if self.transport is not None:
            self.transport.close()


@dataclass
class AsyncStubs:
    jobs: JobServiceClient
    queues: QueueServiceClient
    worker: WorkerServiceClient
    transport: pyqwest.HTTPTransport | None  # ours to close; None: pyqwest's shared one

    async def close(self) -> None:
        await self.jobs.close()
        await self.queues.close()
        await self.worker.close()
        if self.transport is not None:
            await self.transport.aclose()


def sync_stubs(opts: Options) -> SyncStubs:
    transport = None
    http = None
    if opts.http2:  # over plaintext: h2c with prior knowledge
        transport = pyqwest.SyncHTTPTransport(
            http_version=pyqwest.HTTPVersion.HTTP2, tls_include_system_certs=True
        )
        http = pyqwest.SyncClient(transport)
    proto = _PROTOCOLS[opts.protocol]
    # Request compression off: bodies are small and the server is CPU-bound on 2 cores.
    return SyncStubs(
        jobs=JobServiceClientSync(
            opts.url, protocol=proto, send_compression=None, http_client=http
        ),
        queues=QueueServiceClientSync(
            opts.url, protocol=proto, send_compression=None, http_client=http
        ),
        worker=WorkerServiceClientSync(
            opts.url, protocol=proto, send_compression=None, http_client=http
        ),
        transport=transport,
    )


def async_stubs(opts: Options) -> AsyncStubs:
    transport = None
    http = None
    if opts.http2:
        transport = pyqwest.HTTPTransport(
            http_version=pyqwest.HTTPVersion.HTTP2, tls_include_system_certs=True
        )
        http = pyqwest.Client(transport)
    proto = _PROTOCOLS[opts.protocol]
    return AsyncStubs(
        jobs=JobServiceClient(opts.url, protocol=proto, send_compression=None, http_client=http),
        queues=QueueServiceClient(
            opts.url, protocol=proto, send_compression=None, http_client=http
        ),
        worker=WorkerServiceClient(
            opts.url, protocol=proto, send_compression=None, http_client=http
        ),
        transport=transport,
    )
