"""No-op handler throughput of the Python Worker, poll vs stream, on the memory store.

    python sdk-python/bench/worker_throughput.py --jobs 20000 --concurrency 10 --rounds 3

Starts `scripts/runlater serve --store memory --port 0` from this checkout (or uses
--url), then, per round and mode: enqueues --jobs jobs into a fresh queue, runs a Worker
with a no-op handler until the server counts every job SUCCEEDED, and prints jobs/s
(jobs / time from the worker's start to the last ack applied). Modes alternate within a
round so that both see the same machine load.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


def one_run(url: str, mode: str, jobs: int, concurrency: int, handler: str) -> float:
    """Jobs/s of one Worker draining `jobs` enqueued jobs."""
    with Client(url) as client:
        queue = f"bench_{mode}_{secrets.token_hex(3)}"
        client.create_queue(queue)
        for start in range(0, jobs, 1000):
            n = min(1000, jobs - start)
            client.enqueue_many([JobSpec(queue, b"x")] * n)
        app = Worker(url, concurrency=concurrency, dequeue_mode=mode)  # type: ignore[arg-type]

        if handler == "async":

            async def noop_async(job: DequeuedJob) -> None:
                return None

            app.register(queue, noop_async)
        else:

            def noop(job: DequeuedJob) -> None:
                return None

            app.register(queue, noop)

        done = threading.Event()
        elapsed = 0.0

        def watch() -> None:
            nonlocal elapsed
            while app._loop is None:  # started?
                time.sleep(0.001)
            t0 = time.perf_counter()
            while client.count_jobs(queue, state=JobState.SUCCEEDED) < jobs:
                time.sleep(0.02)
            elapsed = time.perf_counter() - t0
            done.set()
            app.stop()

        threading.Thread(target=watch, daemon=True).start()
        asyncio.run(app.run_async())
        assert done.is_set()
        client.delete_queue(queue)
        return jobs / elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running server (default: start one on memory)")
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--handler", choices=["sync", "async"], default="sync")
    parser.add_argument("--modes", default="poll,stream")
    args = parser.parse_args()
    modes = args.modes.split(",")

    def bench(url: str) -> None:
        print(
            f"{args.jobs} jobs, concurrency {args.concurrency}, {args.handler} no-op handler, "
            f"Python {sys.version.split()[0]}"
        )
        results: dict[str, list[float]] = {m: [] for m in modes}
        for r in range(args.rounds):
            for mode in modes if r % 2 == 0 else reversed(modes):
                rate = one_run(url, mode, args.jobs, args.concurrency, args.handler)
                results[mode].append(rate)
                print(f"round {r + 1} {mode:6} {rate:8.0f} jobs/s", flush=True)
        for mode, rates in results.items():
            print(
                f"{mode:6} median {statistics.median(rates):8.0f} jobs/s "
                f"(runs: {', '.join(f'{x:.0f}' for x in rates)})"
            )

    if args.url:
        bench(args.url)
    else:
        with memory_server() as url:
            bench(url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
