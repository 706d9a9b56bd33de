"""A Worker app for the runlater-worker flag tests: handlers for the queues in APP_QUEUES
(comma-separated), on a server that is not there (port 9) unless --url or RUNLATER_URL
say otherwise. Each job succeeds with "concurrency N", the concurrency its queue ran at.
"""

from __future__ import annotations

import os
from datetime import timedelta

from runlater import DequeuedJob, Worker

app = Worker("http://127.0.0.1:9", concurrency=5, poll_wait=timedelta(milliseconds=500))


def handle(job: DequeuedJob) -> str:
    return f"concurrency {app._registrations[job.queue].concurrency}"


for queue in os.environ["APP_QUEUES"].split(","):
    app.register(queue, handle, concurrency=2)
