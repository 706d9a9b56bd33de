"""A Worker app for the CLI tests, configured by environment variables.

APP_QUEUE: the queue; APP_GRACE_MS: shutdown grace; APP_DEQUEUE_MODE: "stream", "poll" or
unset (the default). A body of b"blocking" creates the
file APP_STARTED_FILE and blocks for a minute (to be released on SIGTERM); anything else
succeeds at once.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta

from runlater import Client, DequeuedJob, Worker

app = Worker(
    Client(os.environ["RUNLATER_URL"]),
    dequeue_mode=os.environ.get("APP_DEQUEUE_MODE") or None,  # type: ignore[arg-type]
    poll_wait=timedelta(milliseconds=500),
    shutdown_grace=timedelta(milliseconds=int(os.environ.get("APP_GRACE_MS", "1000"))),
)


@app.handler(os.environ["APP_QUEUE"])
def handle(job: DequeuedJob) -> str:
    if job.body == b"blocking":
        with open(os.environ["APP_STARTED_FILE"], "w") as marker:
            marker.write(job.job_id)
        time.sleep(60)
    return f"{job.body.decode()} done"
