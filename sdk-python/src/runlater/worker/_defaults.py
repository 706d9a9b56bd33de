"""The Worker's defaults: the same in the TypeScript, Python and Java SDKs, with the
measurements behind each in docs/workers.md (the conformance scenario worker-defaults
checks that all three SDKs agree)."""

from __future__ import annotations

from datetime import timedelta

# Handlers running at once, per queue.
CONCURRENCY = 100
# How long a stop lets running handlers finish before their jobs are released.
SHUTDOWN_GRACE = timedelta(seconds=25)
# Longest time a finished job's outcome waits to share a message with others.
ACK_DELAY = timedelta(milliseconds=5)
# Poll mode: long-poll wait of each Dequeue when nothing is due.
POLL_WAIT = timedelta(seconds=20)
