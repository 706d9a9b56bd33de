"""The Python SDK's Worker on the diamond's queues, for test/workflow (real processes).

    python python_worker.py URL QUEUE[,QUEUE...] CONCURRENCY

Every handler succeeds at once. Each hand-out is printed to stdout as one line,
"<job id> <attempt> <epoch ms>", so the test can count the jobs handed out more than once
and when; "ready" is printed once the worker takes jobs. It stops gracefully on SIGTERM,
and at once when stdin closes (the test process is gone).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time

from runlater import DequeuedJob, Worker


async def main() -> None:
    url, queues, concurrency = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
    worker = Worker(url, concurrency=concurrency, worker_id=f"python-{concurrency}")

    async def handle(job: DequeuedJob) -> None:
        sys.stdout.write(f"{job.job_id} {job.attempt} {time.time() * 1000:.0f}\n")
        sys.stdout.flush()

    for queue in queues:
        worker.register(queue, handle)

    def parent_gone() -> None:
        sys.stdin.read()
        worker.stop(force=True)

    threading.Thread(target=parent_gone, daemon=True).start()
    run = asyncio.create_task(worker.run_async(handle_signals=True))
    while not worker.running.is_set() and not run.done():
        await asyncio.sleep(0.01)
    if worker.running.is_set():
        print("ready", flush=True)
    await run


if __name__ == "__main__":
    asyncio.run(main())
