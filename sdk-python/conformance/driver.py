"""Conformance driver for the Python SDK.

Reads one JSON request a line on stdin, runs it through the `runlater` package's public
API (``Client``, ``Worker``), writes one JSON response a line on stdout. No assertions
here: the runner (conformance/runner, TypeScript) does all the matching. The protocol is
conformance/protocol.md; the worker layer (ops worker_*) is at the end of this file.

    python sdk-python/conformance/driver.py
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from workflow_ops import context_json, run_workflow_op

from runlater import (
    Client,
    DequeuedJob,
    DoNotRetry,
    Job,
    JobCheckpoint,
    JobFailure,
    JobOutcome,
    JobSpec,
    JobState,
    JobSuccess,
    Queue,
    QueueConfig,
    QueueRetryPolicy,
    RetryAfter,
    RunlaterError,
    Snooze,
    Success,
    Worker,
)

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
PROTOCOLS = {"connect-binary": "connect", "grpc": "grpc", "grpc-web": "grpc-web"}


def ms(dt: datetime | None) -> int | None:
    return None if dt is None else (dt - EPOCH) // timedelta(milliseconds=1)


def at(value: int | None) -> datetime | None:
    return None if value is None else EPOCH + timedelta(milliseconds=value)


def dur(value: int | None) -> timedelta | None:
    return None if value is None else timedelta(milliseconds=value)


def dur_ms(value: timedelta | None) -> int:
    return 0 if value is None else value // timedelta(milliseconds=1)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def unb64(data: str | None) -> bytes | None:
    return None if data is None else base64.b64decode(data)


def state(name: str | None) -> JobState | None:
    return None if name is None else JobState[name]


def queue_config(c: dict[str, Any] | None) -> QueueConfig:
    c = c or {}
    rp = c.get("retry_policy")
    return QueueConfig(
        priorities=c.get("priorities"),
        claim_timeout=dur(c.get("claim_timeout_ms")),
        retry_policy=None
        if rp is None
        else QueueRetryPolicy(
            initial_delay=dur(rp.get("initial_delay_ms")),
            linear_steps=rp.get("linear_steps"),
            max_delay=dur(rp.get("max_delay_ms")),
        ),
        default_attempts_allowed=c.get("default_attempts_allowed"),
        max_dequeue_per_second=c.get("max_dequeue_per_second"),
        paused=c.get("paused"),
        succeeded_retention=dur(c.get("succeeded_retention_ms")),
        failed_retention=dur(c.get("failed_retention_ms")),
        fifo=c.get("fifo"),
        partitions=c.get("partitions"),
        max_body_bytes=c.get("max_body_bytes"),
    )


def queue_json(q: Queue) -> dict[str, Any]:
    c, s = q.config, q.stats
    rp = c.retry_policy or QueueRetryPolicy()
    return {
        "name": q.name,
        "config": {
            "priorities": c.priorities,
            "claim_timeout_ms": dur_ms(c.claim_timeout),
            "retry_policy": {
                "initial_delay_ms": dur_ms(rp.initial_delay),
                "linear_steps": rp.linear_steps,
                "max_delay_ms": dur_ms(rp.max_delay),
            },
            "default_attempts_allowed": c.default_attempts_allowed,
            "max_dequeue_per_second": c.max_dequeue_per_second,
            "paused": c.paused,
            "succeeded_retention_ms": dur_ms(c.succeeded_retention),
            "failed_retention_ms": dur_ms(c.failed_retention),
            "fifo": c.fifo,
            "partitions": c.partitions,
            "max_body_bytes": c.max_body_bytes,
        },
        "stats": {
            "pending": s.pending,
            "scheduled": s.scheduled,
            "running": s.running,
            "succeeded": s.succeeded,
            "failed": s.failed,
        },
    }


def job_json(j: Job) -> dict[str, Any]:
    return {
        "job_id": j.job_id,
        "queue": j.queue,
        "state": j.state.name,
        "priority": j.priority,
        "body_b64": b64(j.body),
        "run_after_ms": ms(j.run_after),
        "attempts_allowed": j.attempts_allowed,
        "attempts_remaining": j.attempts_remaining,
        "custom_status": j.custom_status,
        "created_at_ms": ms(j.created_at),
        "updated_at_ms": ms(j.updated_at),
        "claim_expires_at_ms": ms(j.claim_expires_at),
        "finished_at_ms": ms(j.finished_at),
        "ordering_key": j.ordering_key,
    }


def dequeued_json(j: DequeuedJob) -> dict[str, Any]:
    return {
        "job_id": j.job_id,
        "body_b64": b64(j.body),
        "priority": j.priority,
        "attempt": j.attempt,
        "attempts_allowed": j.attempts_allowed,
        "claim_token": j.claim_token,
        "claim_expires_at_ms": ms(j.claim_expires_at),
        "created_at_ms": ms(j.created_at),
        "custom_status": j.custom_status,
    }


def outcome_json(o: JobOutcome) -> dict[str, Any]:
    return {"job_id": o.job_id, "outcome": o.outcome.name}


def successes(items: list[dict[str, Any]] | None) -> list[JobSuccess]:
    return [
        JobSuccess(s["job_id"], s["claim_token"], s.get("custom_status", "")) for s in items or []
    ]


def failures(items: list[dict[str, Any]] | None) -> list[JobFailure]:
    return [
        JobFailure(
            f["job_id"],
            f["claim_token"],
            custom_status=f.get("custom_status", ""),
            retry_delay=dur(f.get("retry_delay_ms")),
            no_retry=f.get("no_retry", False),
        )
        for f in items or []
    ]


class Driver:
    def __init__(self) -> None:
        self.target: tuple[str, str] | None = None
        self.worker_url = ""
        # A secure run's token and CA file (`connect`), given to every client and worker.
        self.credentials: dict[str, str] = {}
        self.clients: dict[str, Client] = {}
        self.workers = Workers()

    def client(self, actor: str) -> Client:
        if actor not in self.clients:
            if self.target is None:
                raise RuntimeError("no connect request yet")
            url, protocol = self.target
            if protocol not in PROTOCOLS:
                raise RuntimeError(f"the Python SDK does not offer {protocol}")
            self.clients[actor] = Client(url, protocol=PROTOCOLS[protocol], **self.credentials)  # type: ignore[arg-type]
        return self.clients[actor]

    def close_all(self) -> None:
        for c in self.clients.values():
            c.close()
        self.clients.clear()

    def run(self, r: dict[str, Any]) -> dict[str, Any]:
        op = r["op"]
        if op == "connect":
            self.workers.reset()
            self.close_all()
            self.target = (r["url"], r["protocol"])
            self.worker_url = r.get("worker_url") or r["url"]
            self.credentials = {k: r[k] for k in ("token", "tls_ca") if r.get(k)}
            return {}
        if op == "reset":
            self.workers.reset()
            return {}
        if op == "clock":
            self.workers.now_ms = r["now_ms"]
            return {}
        if op == "shutdown":
            self.workers.reset()
            self.close_all()
            return {}
        if op.startswith("worker_"):
            if self.target is None:
                raise RuntimeError("no connect request yet")
            return self.workers.run(r, self.worker_url, PROTOCOLS[self.target[1]], self.credentials)
        c = self.client(r["actor"])
        if op == "create_queue":
            q, created = c.create_queue(r["queue"], queue_config(r.get("config")))
            return {"created": created, "queue": queue_json(q)}
        if op == "update_queue":
            return {"queue": queue_json(c.update_queue(r["queue"], queue_config(r["config"])))}
        if op == "delete_queue":
            return {"deleted": c.delete_queue(r["queue"])}
        if op == "get_queue":
            return {"queue": queue_json(c.get_queue(r["queue"]))}
        if op == "list_queues":
            return {"queues": [queue_json(q) for q in c.list_queues()]}
        if op == "enqueue":
            specs = [
                JobSpec(
                    queue=j["queue"],
                    body=unb64(j.get("body_b64")) or b"",
                    priority=j.get("priority", 0),
                    run_after=at(j.get("run_after_ms")),
                    attempts_allowed=j.get("attempts_allowed", 0),
                    idempotency_key=j.get("idempotency_key", ""),
                    custom_status=j.get("custom_status", ""),
                    ordering_key=j.get("ordering_key", ""),
                )
                for j in r["jobs"]
            ]
            return {"job_ids": c.enqueue_many(specs)}
        if op == "get_jobs":
            res = c.get_jobs(r["job_ids"], include_body=r.get("include_body", False))
            return {"jobs": [job_json(j) for j in res.jobs]}
        if op == "scan_jobs":
            page = c.scan_jobs(
                r["queue"],
                state=state(r.get("state")),
                priority=r.get("priority", 0),
                future=r.get("future"),
                body_regex=r.get("body_regex", ""),
                limit=r.get("limit", 0),
                page_token=r.get("page_token", ""),
                include_body=r.get("include_body", False),
            )
            return {
                "jobs": [job_json(j) for j in page.jobs],
                "next_page_token": page.next_page_token,
            }
        if op == "count_jobs":
            n = c.count_jobs(
                r["queue"],
                state=state(r.get("state")),
                priority=r.get("priority", 0),
                future=r.get("future"),
                body_regex=r.get("body_regex", ""),
            )
            return {"count": n}
        if op == "retry_failed_jobs":
            n = c.retry_failed_jobs(
                r["queue"],
                priority=r.get("priority", 0),
                attempts_allowed=r.get("attempts_allowed", 0),
                run_after=at(r.get("run_after_ms")),
                limit=r.get("limit", 0),
            )
            return {"count": n}
        if op == "delete_jobs":
            n = c.delete_jobs(
                r["queue"],
                JobState[r["state"]],
                priority=r.get("priority", 0),
                body_regex=r.get("body_regex", ""),
                limit=r.get("limit", 0),
            )
            return {"count": n}
        if op == "dequeue":
            dq = c.dequeue(
                r["queue"],
                limit=r.get("limit", 1),
                succeeded=successes(r.get("succeeded")),
                failed=failures(r.get("failed")),
                dry_run=r.get("dry_run", False),
            )
            return {
                "jobs": [dequeued_json(j) for j in dq.jobs],
                "ack_results": [outcome_json(o) for o in dq.ack_results],
            }
        if op == "ack":
            out = c.ack(
                r["queue"],
                succeeded=successes(r.get("succeeded")),
                failed=failures(r.get("failed")),
            )
            return {"results": [outcome_json(o) for o in out]}
        if op == "checkpoint":
            checkpoints = [
                JobCheckpoint(
                    x["job_id"],
                    x["claim_token"],
                    extend_claim_by=dur(x.get("extend_claim_by_ms")),
                    new_body=unb64(x.get("new_body_b64")),
                    move_to_pending=x.get("move_to_pending", False),
                    run_after=at(x.get("run_after_ms")),
                    attempts_allowed=x.get("attempts_allowed", 0),
                    custom_status=x.get("custom_status", ""),
                )
                for x in r["checkpoints"]
            ]
            return {"results": [outcome_json(o) for o in c.checkpoint(r["queue"], checkpoints)]}
        result = run_workflow_op(c, r)
        if result is None:
            raise RuntimeError(f"unknown op {op!r}")
        return result

    def handle(self, r: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"ok": True, **self.run(r)}
        except RunlaterError as err:
            error: dict[str, Any] = {"code": err.code, "message": err.message}
            if err.reason is not None and err.reason.name != "UNSPECIFIED":
                error["reason"] = err.reason.name
            if err.field:
                error["field"] = err.field
            return {"ok": False, "error": error}
        except Exception:  # noqa: BLE001 - a driver bug, reported to the runner
            return {
                "ok": False,
                "error": {"code": "driver_error", "message": traceback.format_exc()},
            }


# --- the worker layer: the SDK's own Worker, with the scripted handler ---------------------


def act(action: Any, job: DequeuedJob, gate_wait: Any) -> str | Snooze | Success | None:
    """The scripted handler: the job's body says what to do (conformance/protocol.ts,
    HandlerAction). `gate_wait(name)` blocks until the gate opens."""
    if not isinstance(action, dict):
        return None
    if "attempts" in action:
        steps = action["attempts"]
        return act(steps[min(job.attempt, len(steps)) - 1], job, gate_wait)
    if "runs" in action:
        steps, run = action["runs"], job.workflow.run if job.workflow else 1
        return act(steps[min(run, len(steps)) - 1], job, gate_wait)
    if "wait" in action:
        gate_wait(action["wait"])
        return act(action["do"], job, gate_wait)
    if "return" in action:
        if "result_b64" not in action and "no_events" not in action:
            return str(action["return"])
        return Success(
            str(action["return"]),
            result=base64.b64decode(action.get("result_b64", "")),
            no_events=action.get("no_events", False),
        )
    if "raise" in action:
        raise Exception(action["raise"])  # noqa: TRY002 - a plain error, as handlers raise
    if "retry_after_ms" in action:
        raise RetryAfter(
            timedelta(milliseconds=action["retry_after_ms"]), action.get("message", "")
        )
    if "do_not_retry" in action:
        raise DoNotRetry(action["do_not_retry"])
    if "snooze_ms" in action:
        return Snooze(timedelta(milliseconds=action["snooze_ms"]), action.get("status", ""))
    return None


# Threads that wait on gates for async handlers (asyncio cannot wait on a threading.Event).
GATE_WAITERS = ThreadPoolExecutor(max_workers=64, thread_name_prefix="gate")


async def act_async(
    action: Any, job: DequeuedJob, workers: Workers
) -> str | Snooze | Success | None:
    """act() for an `async def` handler: waiting on a gate does not block the event loop,
    and a cancellation (the job given up at shutdown) ends the wait."""
    if isinstance(action, dict) and "attempts" in action:
        steps = action["attempts"]
        return await act_async(steps[min(job.attempt, len(steps)) - 1], job, workers)
    if isinstance(action, dict) and "runs" in action:
        steps, run = action["runs"], job.workflow.run if job.workflow else 1
        return await act_async(steps[min(run, len(steps)) - 1], job, workers)
    if isinstance(action, dict) and "wait" in action:
        gate = workers.gate(action["wait"])
        await asyncio.get_running_loop().run_in_executor(GATE_WAITERS, gate.wait)
        return await act_async(action["do"], job, workers)
    return act(action, job, gate_wait=None)


def parse_action(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


@dataclass
class RunningWorker:
    app: Worker
    client: Client
    thread: threading.Thread | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    error: BaseException | None = None
    stopped: bool = False


class Workers:
    """The workers of one driver, by actor; gates; the server's clock."""

    def __init__(self) -> None:
        self.now_ms = int(time.time() * 1000)
        self.running: dict[str, RunningWorker] = {}
        self.gates: dict[str, threading.Event] = {}
        self.changed = threading.Condition()

    def clock(self) -> datetime:
        return EPOCH + timedelta(milliseconds=self.now_ms)

    def gate(self, name: str) -> threading.Event:
        with self.changed:
            return self.gates.setdefault(name, threading.Event())

    def notify(self) -> None:
        with self.changed:
            self.changed.notify_all()

    def handler(self, w: RunningWorker, is_async: bool) -> Any:
        """A plain function on connect-binary and grpc-web, `async def` on grpc: every
        scenario runs with both kinds of handler across the matrix."""

        def call(job: DequeuedJob) -> dict[str, Any]:
            record = {
                "job_id": job.job_id,
                "attempt": job.attempt,
                "body_b64": b64(job.body),
                "finished": False,
                "workflow": context_json(job.workflow),
            }
            with self.changed:
                w.calls.append(record)
                self.changed.notify_all()
            return record

        def finished(record: dict[str, Any]) -> None:
            with self.changed:
                record["finished"] = True
                self.changed.notify_all()

        def handle(job: DequeuedJob) -> str | Snooze | Success | None:
            record = call(job)
            try:
                return act(parse_action(job.body), job, lambda g: self.gate(g).wait())
            finally:
                finished(record)

        async def handle_async(job: DequeuedJob) -> str | Snooze | Success | None:
            record = call(job)
            try:
                return await act_async(parse_action(job.body), job, self)
            finally:
                finished(record)

        return handle_async if is_async else handle

    def run(self, r: dict[str, Any], url: str, protocol: str, credentials: dict[str, str]) -> dict[str, Any]:
        """`credentials`: the token and tls_ca every client is made with (a secure run)."""
        op, actor = r["op"], r["actor"]
        w = self.running.get(actor)
        if op == "worker_start":
            if w is not None:
                raise RuntimeError(f"{actor} already runs a worker")
            return self._start(actor, r, url, protocol, credentials)
        if op == "worker_release":
            self.gate(r["gate"]).set()
            return {}
        if op == "worker_defaults":
            with Client(url, protocol=protocol, **credentials) as c:  # type: ignore[arg-type]
                app = Worker(c)
                return {
                    "concurrency": app.concurrency,
                    "batch_size": app.batch_size or app.concurrency,
                    "dequeue_mode": app.dequeue_mode,
                    "poll_wait_ms": dur_ms(app.poll_wait),
                    "shutdown_grace_ms": dur_ms(app.shutdown_grace),
                    "ack_delay_ms": dur_ms(app.ack_delay),
                }
        if w is None:
            raise RuntimeError(f"{actor} runs no worker")
        if op == "worker_stop":
            w.app.stop()
            if r.get("wait", True):
                self._await(w, lambda: w.stopped)
            return {}
        if op == "worker_await":
            calls, finished, stopped = r.get("calls", 0), r.get("finished", 0), r.get("stopped")

            def done() -> bool:
                return (
                    len(w.calls) >= calls
                    and sum(1 for c in w.calls if c["finished"]) >= finished
                    and (not stopped or w.stopped)
                )

            self._await(w, done)
            with self.changed:
                return {"calls": [dict(c) for c in w.calls], "stopped": w.stopped}
        raise RuntimeError(f"unknown op {op!r}")

    def _start(
        self, actor: str, r: dict[str, Any], url: str, protocol: str, credentials: dict[str, str]
    ) -> dict[str, Any]:
        o = r.get("options") or {}
        client = Client(url, protocol=protocol, **credentials)  # type: ignore[arg-type]
        kw: dict[str, Any] = {"clock": self.clock}
        for name in ("concurrency", "batch_size", "dequeue_mode"):
            if name in o:
                kw[name] = o[name]
        for name in ("poll_wait", "shutdown_grace", "ack_delay"):
            if f"{name}_ms" in o:
                kw[name] = timedelta(milliseconds=o[f"{name}_ms"])
        app = Worker(client, **kw)
        w = RunningWorker(app, client)
        app.register(r["queue"], self.handler(w, is_async=protocol == "grpc"))

        def target() -> None:
            try:
                app.run(handle_signals=False)
            except BaseException as exc:  # noqa: BLE001 - reported by worker_start
                w.error = exc
            finally:
                with self.changed:
                    w.stopped = True
                    self.changed.notify_all()

        w.thread = threading.Thread(target=target, name=f"worker-{actor}", daemon=True)
        w.thread.start()
        # Started (its start-up check passed) or failed: whichever comes first.
        while not app.running.wait(0.01) and not w.stopped:
            pass
        if w.error is not None:
            client.close()
            raise w.error
        self.running[actor] = w
        return {}

    def _await(self, w: RunningWorker, done: Any, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not done() and time.monotonic() < deadline:
                self.changed.wait(deadline - time.monotonic())

    def reset(self) -> None:
        """Stops every worker at once (gates opened first, so blocked handlers end)."""
        with self.changed:
            for g in self.gates.values():
                g.set()
        for w in self.running.values():
            w.app.stop(force=True)
        for w in self.running.values():
            if w.thread is not None:
                w.thread.join(30)
            w.client.close()
        self.running.clear()
        self.gates.clear()


def main() -> None:
    driver = Driver()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        sys.stdout.write(json.dumps(driver.handle(req)) + "\n")
        sys.stdout.flush()
        if req.get("op") == "shutdown":
            break
    driver.close_all()


if __name__ == "__main__":
    main()
