"""Conformance driver for the Python SDK.

Reads one JSON request a line on stdin, runs it through the `runlater` package's public
API (``Client``), writes one JSON response a line on stdout. No assertions here: the
runner (conformance/runner, TypeScript) does all the matching. The protocol is
conformance/protocol.md.

    python sdk-python/conformance/driver.py
"""

from __future__ import annotations

import base64
import json
import sys
import traceback
from datetime import datetime, timedelta, timezone
from typing import Any

from runlater import (
    Client,
    DequeuedJob,
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
    RunlaterError,
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
        self.clients: dict[str, Client] = {}

    def client(self, actor: str) -> Client:
        if actor not in self.clients:
            if self.target is None:
                raise RuntimeError("no connect request yet")
            url, protocol = self.target
            if protocol not in PROTOCOLS:
                raise RuntimeError(f"the Python SDK does not offer {protocol}")
            self.clients[actor] = Client(url, protocol=PROTOCOLS[protocol])  # type: ignore[arg-type]
        return self.clients[actor]

    def close_all(self) -> None:
        for c in self.clients.values():
            c.close()
        self.clients.clear()

    def run(self, r: dict[str, Any]) -> dict[str, Any]:
        op = r["op"]
        if op == "connect":
            self.close_all()
            self.target = (r["url"], r["protocol"])
            return {}
        if op == "shutdown":
            self.close_all()
            return {}
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
        raise RuntimeError(f"unknown op {op!r}")

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
