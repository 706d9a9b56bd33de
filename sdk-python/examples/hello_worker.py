"""hello_worker: enqueue a few jobs and process them with a Worker.

    runlater serve --port 8080          # in another terminal (scripts/runlater in a checkout)
    python examples/hello_worker.py     # RUNLATER_URL overrides http://127.0.0.1:8080

It stops by itself once every job has finished; a real worker runs until SIGTERM, e.g.
`runlater-worker examples.hello_worker:app`.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import timedelta

from runlater import Client, DequeuedJob, JobState, QueueConfig, RetryAfter, Worker

URL = os.environ.get("RUNLATER_URL", "http://127.0.0.1:8080")
QUEUE = os.environ.get("HELLO_QUEUE", "hello")

client = Client(URL)
app = Worker(client, concurrency=4, poll_wait=timedelta(seconds=1))


@app.handler(QUEUE)
def greet(job: DequeuedJob) -> str:
    name = job.body.decode()
    if name == "flaky" and job.attempt == 1:
        raise RetryAfter(timedelta(milliseconds=200), "first try never works")
    print(f"hello, {name} (attempt {job.attempt})")
    return f"greeted {name}"  # becomes the job's custom status


def main() -> None:
    client.create_queue(QUEUE, QueueConfig(claim_timeout=timedelta(seconds=30)))
    ids = [client.enqueue(QUEUE, name) for name in ("ada", "grace", "flaky")]

    # Stop the worker once every job has succeeded (a real worker would just app.run()).
    def stop_when_done() -> None:
        while any((j := client.get_job(i)) and j.state != JobState.SUCCEEDED for i in ids):
            time.sleep(0.1)
        app.stop()

    threading.Thread(target=stop_when_done, daemon=True).start()
    app.run()
    for job_id in ids:
        job = client.get_job(job_id)
        assert job is not None
        print(job_id, job.state.name, job.custom_status.splitlines()[-1])
    client.delete_queue(QUEUE)
    client.close()


if __name__ == "__main__":
    main()
