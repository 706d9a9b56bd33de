"""An answer past the SDK's bound (64 MiB, as the TypeScript and Java SDKs) is refused with
RESOURCE_EXHAUSTED; one at the bound is read (docs/limits.md). The server here is a plain
HTTP/1.1 one answering every call with that many zero bytes: only a broken or hostile
server sends such answers.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from runlater import AsyncClient, Client, ResourceExhaustedError, RunlaterError
from runlater._transport import ANSWER_MAX_BYTES

_CHUNK = b"\0" * (1 << 20)


class _Answer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        size = int(self.headers["x-answer-bytes"])
        self.send_response(200)
        self.send_header("content-type", "application/proto")
        self.send_header("content-length", str(size))
        self.end_headers()
        while size > 0:
            self.wfile.write(_CHUNK[: min(size, len(_CHUNK))])
            size -= len(_CHUNK)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def raw_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("size", "refused"), [(ANSWER_MAX_BYTES + 1, True), (ANSWER_MAX_BYTES, False)]
)
def test_an_answer_past_the_bound_is_refused(raw_url: str, size: int, refused: bool) -> None:
    with (
        Client(raw_url, headers={"x-answer-bytes": str(size)}) as client,
        pytest.raises(RunlaterError) as caught,
    ):
        client.list_queues()
    # At the bound the size passes; zero bytes are then no ListQueues answer.
    assert isinstance(caught.value, ResourceExhaustedError) is refused, caught.value


def test_the_async_client_has_the_same_bound(raw_url: str) -> None:
    async def scenario() -> None:
        headers = {"x-answer-bytes": str(ANSWER_MAX_BYTES + 1)}
        async with AsyncClient(raw_url, headers=headers) as client:
            with pytest.raises(ResourceExhaustedError):
                await client.list_queues()

    asyncio.run(scenario())
