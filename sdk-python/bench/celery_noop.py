"""Celery's default worker on a no-op task, for the comparison in test/bench/workers.ts.

    python sdk-python/bench/celery_noop.py --broker redis://127.0.0.1:6379/14 [--jobs 10000]
        [--runs 1] [--json]

Needs Celery with its Redis transport (`pip install "celery[redis]==5.7.0"`), which the
SDK does not depend on: test/bench/workers.ts --celery installs it into a temporary venv
at bench time (never in CI). Per run: empties the broker's database, enqueues --jobs
tasks, starts `celery -A celery_noop worker` with every setting at its default (prefork
pool, one process per core, prefetch multiplier 4, acks before the task runs), and times
it from the first task taken off the queue until the queue and its unacked set are both
empty, polling Redis every millisecond. That is generous to Celery: its start-up is not
counted, and the last tasks taken may still be running when the clock stops.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from celery import Celery  # type: ignore[import-not-found]

BROKER = os.environ.get("CELERY_NOOP_BROKER", "redis://127.0.0.1:6379/14")
app = Celery("celery_noop", broker=BROKER)


@app.task(name="noop")  # type: ignore[untyped-decorator]
def noop() -> None:
    return None


def one_run(broker: str, jobs: int) -> float:
    import redis  # type: ignore[import-not-found]

    r = redis.Redis.from_url(broker)
    r.flushdb()
    app.conf.broker_url = broker
    with app.connection_for_write() as conn, conn.Producer() as producer:
        for _ in range(jobs):
            noop.apply_async(producer=producer)
    assert r.llen("celery") == jobs, r.llen("celery")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "celery_noop", "worker", "--loglevel", "WARNING"],
        cwd=Path(__file__).resolve().parent,
        env={**os.environ, "CELERY_NOOP_BROKER": broker},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while r.llen("celery") == jobs:  # the worker is starting
            time.sleep(0.001)
        t0 = time.perf_counter()
        while r.llen("celery") > 0 or r.hlen("unacked") > 0:
            time.sleep(0.001)
        return time.perf_counter() - t0
    finally:
        worker.terminate()
        worker.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--broker", default=BROKER)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for _ in range(args.runs):
        seconds = one_run(args.broker, args.jobs)
        line: dict[str, Any] = {
            "sdk": "celery",
            "jobs": args.jobs,
            "seconds": seconds,
            "jobs_per_s": round(args.jobs / seconds),
        }
        print(json.dumps(line) if args.json else f"{line['jobs_per_s']} tasks/s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
