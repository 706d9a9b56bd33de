"""Worker: runs handlers for queues, taking jobs over a DequeueStream (HTTP/2) or by
batched long-poll Dequeue calls, and reporting their outcomes in batches.

    app = Worker(Client("http://127.0.0.1:8080"), concurrency=8)

    @app.handler("emails")
    def send(job: DequeuedJob) -> str | None: ...

    app.run()   # until SIGTERM/SIGINT, then a graceful shutdown

Everything runs on one asyncio loop: `async def` handlers as tasks, plain functions on
each queue's own threads. The parts, by responsibility:

- _worker: the public Worker (registration, run, stop, the graceful drain);
- _runner: one queue's slots and the jobs running in them (QueueRunner);
- _streamer: stream mode, one DequeueStream per queue with credits and acks on it;
- _poller: poll mode, Dequeue calls that fill the free slots, with acks piggy-backed;
- _acks: the outcomes of finished jobs, batched on their way to the server;
- _claims: claim renewal of a queue's running jobs (one timer, batched Checkpoints);
- _threads: a queue's handler threads for plain-function handlers;
- _outcome: a handler's return value or exception as the job's outcome;
- _defaults: the defaults shared with the TypeScript and Java SDKs (docs/workers.md).
"""

from __future__ import annotations

from .._types import DequeuedJob
from ..control import DoNotRetry, RetryAfter, Snooze
from ._outcome import MAX_STATUS_CHARS, Handler, HandlerResult, log
from ._worker import DequeueMode, Worker

__all__ = [
    "MAX_STATUS_CHARS",
    "DequeueMode",
    "DequeuedJob",
    "DoNotRetry",
    "Handler",
    "HandlerResult",
    "RetryAfter",
    "Snooze",
    "Worker",
    "log",
]
