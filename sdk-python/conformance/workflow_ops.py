"""The Python driver's workflow and schedule ops (conformance/protocol.md) through the
SDK's Workflow builder and Client methods, with the conversions to and from the
protocol's JSON."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone
from typing import Any

from runlater import (
    Client,
    External,
    ExternalEvent,
    Instance,
    OverlapPolicy,
    Schedule,
    Upstream,
    Workflow,
    WorkflowContext,
    WorkflowEvent,
)

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _ms(dt: datetime | None) -> int | None:
    return None if dt is None else (dt - EPOCH) // timedelta(milliseconds=1)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def event_json(e: WorkflowEvent) -> dict[str, Any]:
    return {
        "event_id": e.event_id,
        "input": e.input,
        "from_job": e.from_job,
        "from_run": e.from_run,
        "custom_status": e.custom_status,
        "result_b64": _b64(e.result),
        "posted_at_ms": _ms(e.posted_at),
    }


def context_json(c: WorkflowContext | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "workflow": c.workflow,
        "version": c.version,
        "instance_id": c.instance_id,
        "job": c.job,
        "run": c.run,
        "triggered_by": [event_json(e) for e in c.triggered_by],
    }


def instance_json(i: Instance) -> dict[str, Any]:
    return {
        "instance_id": i.instance_id,
        "workflow": i.workflow,
        "version": i.version,
        "state": i.state.name,
        "keep_open": i.keep_open,
        "created_at_ms": _ms(i.created_at),
        "ended_at_ms": _ms(i.ended_at),
        "jobs": [
            {
                "name": j.name,
                "state": j.state.name,
                "pending_events": [event_json(e) for e in j.pending_events],
                "runs": [
                    {
                        "run": r.run,
                        "job_id": r.job_id,
                        "triggered_by": [event_json(e) for e in r.triggered_by],
                        "outcome": r.outcome.name,
                        "custom_status": r.custom_status,
                        "result_b64": _b64(r.result),
                        "queued_at_ms": _ms(r.queued_at),
                        "ended_at_ms": _ms(r.ended_at),
                    }
                    for r in j.runs
                ],
                "run_count": j.run_count,
                "dropped_events": j.dropped_events,
            }
            for j in i.jobs
        ],
    }


def schedule_json(s: Schedule) -> dict[str, Any]:
    return {
        "name": s.name,
        "cron": s.cron,
        "overlap": s.overlap.name,
        "paused": s.paused,
        "next_fire_at_ms": _ms(s.next_fire_at),
        "last_started": s.last_started,
        "fires": s.fires,
        "history": [
            {
                "outcome": f.outcome.name,
                "at_ms": _ms(f.at),
                "through_ms": _ms(f.through),
                "fired_at_ms": _ms(f.fired_at),
                "started": f.started,
                "previous": f.previous,
                "error": f.error,
            }
            for f in s.history
        ],
    }


def _event(e: dict[str, Any]) -> ExternalEvent:
    return ExternalEvent(
        e["input"], e.get("custom_status", ""), base64.b64decode(e.get("result_b64", ""))
    )


def _workflow(w: dict[str, Any]) -> Workflow:
    wf = Workflow(w["name"])
    for j in w["jobs"]:
        inputs = [
            External(i["external"]) if "external" in i else Upstream(i["job"], i.get("seed", False))
            for i in j.get("inputs", [])
        ]
        wf.job(
            j["name"],
            queue=j["queue"],
            inputs=inputs,
            on_failure="continue" if j.get("on_failure") == "CONTINUE" else "abort",
            body=base64.b64decode(j.get("body_b64", "")),
            priority=j.get("priority", 0),
            attempts_allowed=j.get("attempts_allowed", 0),
        )
    return wf


def run_workflow_op(c: Client, r: dict[str, Any]) -> dict[str, Any] | None:
    """Runs a workflow or schedule op; None if `r` is not one."""
    op = r["op"]
    if op == "apply_workflow":
        version, created = c.apply_workflow(_workflow(r["workflow"]))
        jobs = [{"name": j["name"], "queue": j["queue"]} for j in r["workflow"]["jobs"]]
        return {
            "created": created,
            "workflow": {"name": r["workflow"]["name"], "version": version, "jobs": jobs},
        }
    one = {
        "start_instance": lambda: c.start_instance(
            r["workflow"],
            events=[_event(e) for e in r.get("events", [])],
            keep_open=r.get("keep_open", False),
        ),
        "post_event": lambda: c.post_event(r["instance_id"], _event(r["event"])),
        "get_instance": lambda: c.get_instance(r["instance_id"]),
        "wait_instance": lambda: c.wait_for_instance(
            r["instance_id"],
            timeout=timedelta(milliseconds=r["timeout_ms"]),
            poll_interval=timedelta(milliseconds=20),
        ),
        "rerun_job": lambda: c.rerun_job(r["instance_id"], r["job"], r["run"]),
        "disable_job": lambda: c.disable_job(r["instance_id"], r["job"]),
        "enable_job": lambda: c.enable_job(r["instance_id"], r["job"]),
        "close_instance": lambda: c.close_instance(r["instance_id"]),
        "cancel_instance": lambda: c.cancel_instance(r["instance_id"]),
    }.get(op)
    if one is not None:
        return {"instance": instance_json(one())}
    if op == "create_schedule":
        s = r["schedule"]
        wf, job = s.get("workflow"), s.get("job")
        window = s.get("catch_up_window_ms")
        schedule, created = c.create_schedule(
            s["name"],
            s["cron"],
            workflow=wf["workflow"] if wf else None,
            events=[_event(e) for e in (wf or {}).get("events", [])],
            keep_open=(wf or {}).get("keep_open", False),
            queue=job["queue"] if job else None,
            body=base64.b64decode((job or {}).get("body_b64", "")),
            overlap=OverlapPolicy[s.get("overlap", "SKIP")],
            time_zone=s.get("time_zone", ""),
            catch_up_window=None if window is None else timedelta(milliseconds=window),
            paused=r.get("paused", False),
        )
        return {"created": created, "schedule": schedule_json(schedule)}
    if op == "get_schedule":
        return {"schedule": schedule_json(c.get_schedule(r["name"]))}
    return None
