"""No-op handler throughput of one Python Worker, at its defaults unless told otherwise.

    python sdk-python/bench/worker_throughput.py [--url URL] [--jobs 20000] [--runs 3]
        [--warmup 0] [--concurrency N] [--mode stream|poll] [--ack-delay-ms N]
        [--handler sync|async] [--json] [--latency N]

Per run: enqueues --jobs jobs into a fresh queue, starts `Worker(url)` (no options but
those given) with a no-op handler (a plain function unless --handler async), and times
it from the start until the server counts every job SUCCEEDED. Without --url it starts
`scripts/runlater serve --store memory` from this checkout. --json prints one JSON line
per run, for test/bench/workers.ts (npm run bench:workers), which runs this next to the
TypeScript and Java benches and Celery. --latency N: instead, N jobs one at a time to an
idle worker, each enqueued once the one before has been handled; prints the median of
finished_at - created_at (both the server's times).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from runlater import Client, DequeuedJob, JobSpec, JobState, Worker

SERVER = Path(__file__).resolve().parents[2] / "scripts" / "runlater"


@contextmanager
def memory_server() -> Iterator[str]:
    proc = subprocess.Popen(
        [str(SERVER), "serve", "--store", "memory", "--port", "0", "--log-level", "warn"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("runlater listening on "):
                yield line.split()[-1]
                break
        else:
            raise RuntimeError(f"the server exited with {proc.wait()} before listening")
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def one_run(url: str, jobs: int, options: dict[str, Any], handler: str) -> float:
    """Seconds one Worker takes to drain `jobs` enqueued jobs."""
    with Client(url) as client:
        queue = f"bench_py_{secrets.token_hex(4)}"
        client.create_queue(queue)
        for start in range(0, jobs, 1000):
            client.enqueue_many([JobSpec(queue, b"x")] * min(1000, jobs - start))
        app = Worker(url, **options)
        handled = 0
        all_handled = threading.Event()

        def count() -> None:
            nonlocal handled
            handled += 1  # one handler at a time may lose a count: the server's count decides
            if handled >= jobs:
                all_handled.set()

        if handler == "async":

            async def noop_async(job: DequeuedJob) -> None:
                count()

            app.register(queue, noop_async)
        else:

            def noop(job: DequeuedJob) -> None:
                count()

            app.register(queue, noop)

        elapsed = 0.0

        def watch() -> None:
            nonlocal elapsed
            while app._loop is None:  # started?
                time.sleep(0.001)
            t0 = time.perf_counter()
            all_handled.wait(600)
            # Done when the server has applied every outcome, not when the last handler returned.
            while client.count_jobs(queue, state=JobState.SUCCEEDED) < jobs:
                time.sleep(0.005)
            elapsed = time.perf_counter() - t0
            app.stop()

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        asyncio.run(app.run_async())
        watcher.join()
        client.delete_queue(queue)
        return elapsed


def latency(url: str, n: int, options: dict[str, Any], handler: str) -> float:
    """Median milliseconds from enqueue to outcome applied of `n` lone jobs."""
    with Client(url) as client:
        queue = f"bench_py_{secrets.token_hex(4)}"
        client.create_queue(queue)
        app = Worker(url, **options)
        handled = threading.Semaphore(0)

        def noop(job: DequeuedJob) -> None:
            handled.release()

        async def noop_async(job: DequeuedJob) -> None:
            handled.release()

        app.register(queue, noop_async if handler == "async" else noop)
        ids: list[str] = []

        def feed() -> None:
            while not app.running.is_set():
                time.sleep(0.001)
            for _ in range(n):
                ids.append(client.enqueue(queue, b"x"))
                handled.acquire()
                time.sleep(0.06)  # its outcome on its own, not with the next
            app.stop()

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        asyncio.run(app.run_async())
        feeder.join()
        jobs = client.get_jobs(ids).jobs
        ms = sorted(
            (j.finished_at - j.created_at).total_seconds() * 1000
            for j in jobs
            if j.finished_at and j.created_at
        )
        client.delete_queue(queue)
        return ms[len(ms) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--url", help="a running server (default: start one on memory)")
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=0, help="jobs of an untimed first run")
    parser.add_argument("--concurrency", type=int, help="default: the Worker's")
    parser.add_argument("--mode", choices=["stream", "poll"], help="default: the Worker's")
    parser.add_argument("--ack-delay-ms", type=int, help="default: the Worker's")
    parser.add_argument("--handler", choices=["sync", "async"], default="sync")
    parser.add_argument("--json", action="store_true", help="one JSON line per run")
    parser.add_argument("--latency", type=int, help="N lone jobs: median enqueue-to-outcome ms")
    args = parser.parse_args()
    options: dict[str, Any] = {}
    if args.concurrency:
        options["concurrency"] = args.concurrency
    if args.mode:
        options["dequeue_mode"] = args.mode
    if args.ack_delay_ms is not None:
        options["ack_delay"] = timedelta(milliseconds=args.ack_delay_ms)

    def bench(url: str) -> None:
        if args.latency:
            ms = latency(url, args.latency, options, args.handler)
            print(json.dumps({"sdk": "python", "jobs": args.latency, "latency_ms": ms}), flush=True)
            return
        if not args.json:
            print(
                f"{args.jobs} jobs, {options or 'defaults'}, {args.handler} no-op handler, "
                f"Python {sys.version.split()[0]}"
            )
        if args.warmup:
            one_run(url, args.warmup, options, args.handler)
        rates = []
        for _ in range(args.runs):
            seconds = one_run(url, args.jobs, options, args.handler)
            rate = args.jobs / seconds
            rates.append(rate)
            if args.json:
                sdk = "python" if args.handler == "sync" else "python-async"
                line = {
                    "sdk": sdk,
                    "jobs": args.jobs,
                    "seconds": seconds,
                    "jobs_per_s": round(rate),
                }
                print(json.dumps(line), flush=True)
            else:
                print(f"{rate:8.0f} jobs/s", flush=True)
        if not args.json and len(rates) > 1:
            runs = ", ".join(f"{x:.0f}" for x in rates)
            print(f"median {statistics.median(rates):.0f} jobs/s (runs: {runs})")

    if args.url:
        bench(args.url)
    else:
        with memory_server() as url:
            bench(url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
