"""AsyncClient: the asyncio runlater client; same methods as Client, awaitable.

Kept as a mirror of client.py rather than generated from it: each method is two lines of
request building (shared in _convert) and one awaited call.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from types import TracebackType
from typing import TypeVar

from connectrpc.errors import ConnectError

from . import _convert as cv
from . import _workflow_convert as wcv
from ._body import Body
from ._errors import translate
from ._gen.v1 import schedule_service_pb2 as spb
from ._gen.v1 import worker_service_pb2
from ._gen.v1 import workflow_service_pb2 as wpb
from ._transport import DEFAULT_TIMEOUT, HttpVersion, Options, Protocol, async_stubs, make_options
from ._types import (
    DequeueResult,
    GetJobsResult,
    Job,
    JobCheckpoint,
    JobFailure,
    JobOutcome,
    JobPage,
    JobSpec,
    JobState,
    JobSuccess,
    Queue,
    QueueConfig,
)
from .workflows import ExternalEvent, Instance, InstanceState, OverlapPolicy, Schedule, Workflow

_Req = TypeVar("_Req")
_Res = TypeVar("_Res")


class AsyncClient:
    """asyncio client for every runlater call. Use it from one event loop.

    >>> async with AsyncClient("http://127.0.0.1:8080") as client:
    ...     job_id = await client.enqueue("emails", b"hello")

    Takes the same arguments as Client (token, TLS files and their environment variables
    included).
    """

    def __init__(
        self,
        url: str,
        *,
        protocol: Protocol = "connect",
        timeout: timedelta | None = DEFAULT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        http_version: HttpVersion | None = None,
        token: str | None = None,
        tls_ca: str | os.PathLike[str] | None = None,
        tls_cert: str | os.PathLike[str] | None = None,
        tls_key: str | os.PathLike[str] | None = None,
    ) -> None:
        self.options = make_options(
            url,
            protocol=protocol,
            timeout=timeout,
            headers=headers,
            http_version=http_version,
            token=token,
            tls_ca=tls_ca,
            tls_cert=tls_cert,
            tls_key=tls_key,
        )
        self._stubs = async_stubs(self.options)

    @classmethod
    def _from_options(cls, options: Options) -> AsyncClient:
        """A client with settings already resolved (the Worker's own, made from a Client's
        or a URL's): the environment is not read again, nor are the TLS files."""
        client = cls.__new__(cls)
        client.options = options
        client._stubs = async_stubs(options)
        return client

    async def close(self) -> None:
        await self._stubs.close()

    @property
    def streams(self) -> bool:
        """Whether the transport carries bidirectional streams (HTTP/2 with Connect or gRPC):
        what the Worker's stream mode needs."""
        return self.options.streams

    async def __aenter__(self) -> AsyncClient:  # noqa: PYI034 - not meant to be subclassed
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _call(
        self,
        method: Callable[..., Awaitable[_Res]],
        request: _Req,
        extra_timeout: timedelta | None = None,
    ) -> _Res:
        try:
            return await method(
                request,
                headers=self.options.call_headers or None,
                timeout_ms=self.options.timeout_ms(extra_timeout),
            )
        except ConnectError as err:
            # connectrpc turns the cancellation of the awaiting task into a CANCELED
            # error; give asyncio its CancelledError back so task cancellation works.
            if isinstance(err.__cause__, asyncio.CancelledError):
                raise asyncio.CancelledError() from err
            raise translate(err) from err

    async def _dequeue_stream(
        self, requests: AsyncIterator[worker_service_pb2.DequeueStreamRequest]
    ) -> AsyncIterator[worker_service_pb2.DequeueStreamResponse]:
        """WorkerService.DequeueStream, for the Worker: protobuf messages both ways, no
        deadline (the stream lives as long as the worker), errors as RunlaterError."""
        stream = self._stubs.worker.dequeue_stream(
            requests, headers=self.options.call_headers or None
        )
        try:
            async for response in stream:
                yield response
        except ConnectError as err:
            if isinstance(err.__cause__, asyncio.CancelledError):
                raise asyncio.CancelledError() from err
            raise translate(err) from err

    # --- JobService -----------------------------------------------------------------

    async def enqueue(
        self,
        queue: str,
        body: Body = b"",
        *,
        priority: int = 0,
        run_after: datetime | timedelta | None = None,
        attempts_allowed: int = 0,
        idempotency_key: str = "",
        custom_status: str = "",
        ordering_key: str = "",
        traceparent: str | None = None,
    ) -> str:
        """Enqueues one job and returns its id.

        The body is sent as the TypeScript SDK sends it: bytes as they are, a str as UTF-8,
        anything else as JSON (a dict, a list, a number, True/False, None; a dataclass or a
        pydantic model as an object of its fields). Handlers read it back with job.json().

        Jobs of a queue that share an ``ordering_key`` run one at a time, in enqueue
        order: the next is handed out only after the one before it reached SUCCEEDED or
        FAILED (or was deleted). Different keys run in parallel. FIFO queues ignore it.

        The job carries the W3C ``traceparent`` of the active OpenTelemetry span (if any),
        and the worker runs its handler in a span of the same trace (docs/tracing.md);
        pass one to use it instead, or "" for none.
        """
        spec = JobSpec(
            queue=queue,
            body=body,
            priority=priority,
            run_after=run_after,
            attempts_allowed=attempts_allowed,
            idempotency_key=idempotency_key,
            custom_status=custom_status,
            ordering_key=ordering_key,
            traceparent=traceparent,
        )
        return (await self.enqueue_many([spec]))[0]

    async def enqueue_many(self, jobs: Iterable[JobSpec]) -> list[str]:
        """Enqueues up to 1,000 jobs atomically (one bad job rejects all); ids in order."""
        resp = await self._call(self._stubs.jobs.enqueue, cv.enqueue_request(jobs))
        return list(resp.job_ids)

    async def get_jobs(
        self, job_ids: Sequence[str], *, include_body: bool = False
    ) -> GetJobsResult:
        """Looks jobs up by id; unknown ids are listed, not raised."""
        req = cv.get_jobs_request(job_ids, include_body)
        resp = await self._call(self._stubs.jobs.get_jobs, req)
        return GetJobsResult(
            jobs=[cv.job_from_proto(j) for j in resp.jobs],
            not_found_job_ids=list(resp.not_found_job_ids),
        )

    async def get_job(self, job_id: str, *, include_body: bool = False) -> Job | None:
        """One job by id, or None if it does not exist (any more)."""
        jobs = (await self.get_jobs([job_id], include_body=include_body)).jobs
        return jobs[0] if jobs else None

    async def scan_jobs(
        self,
        queue: str,
        *,
        state: JobState | None = None,
        priority: int = 0,
        future: bool | None = None,
        body_regex: str = "",
        limit: int = 0,
        page_token: str = "",
        include_body: bool = False,
    ) -> JobPage:
        """One page of a queue's jobs, newest run_after first."""
        req = cv.scan_request(
            queue, state, priority, future, body_regex, limit, page_token, include_body
        )
        resp = await self._call(self._stubs.jobs.scan_jobs, req)
        return JobPage([cv.job_from_proto(j) for j in resp.jobs], resp.next_page_token)

    async def iter_jobs(
        self,
        queue: str,
        *,
        state: JobState | None = None,
        priority: int = 0,
        future: bool | None = None,
        body_regex: str = "",
        page_size: int = 0,
        include_body: bool = False,
    ) -> AsyncIterator[Job]:
        """Every matching job, fetching pages as needed."""
        token = ""
        while True:
            page = await self.scan_jobs(
                queue,
                state=state,
                priority=priority,
                future=future,
                body_regex=body_regex,
                limit=page_size,
                page_token=token,
                include_body=include_body,
            )
            for job in page.jobs:
                yield job
            token = page.next_page_token
            if not token:
                return

    async def count_jobs(
        self,
        queue: str,
        *,
        state: JobState | None = None,
        priority: int = 0,
        future: bool | None = None,
        body_regex: str = "",
    ) -> int:
        """Number of a queue's jobs matching the filters."""
        req = cv.count_request(queue, state, priority, future, body_regex)
        return (await self._call(self._stubs.jobs.count_jobs, req)).count

    async def retry_failed_jobs(
        self,
        queue: str,
        *,
        priority: int = 0,
        attempts_allowed: int = 0,
        run_after: datetime | timedelta | None = None,
        limit: int = 0,
    ) -> int:
        """Moves FAILED jobs back to PENDING; returns how many moved."""
        req = cv.retry_request(queue, priority, attempts_allowed, run_after, limit)
        return (await self._call(self._stubs.jobs.retry_failed_jobs, req)).count

    async def delete_jobs(
        self,
        queue: str,
        state: JobState,
        *,
        priority: int = 0,
        body_regex: str = "",
        limit: int = 0,
    ) -> int:
        """Deletes jobs of one state; returns how many were deleted."""
        req = cv.delete_request(queue, state, priority, body_regex, limit)
        return (await self._call(self._stubs.jobs.delete_jobs, req)).count

    # --- QueueService ---------------------------------------------------------------

    async def create_queue(
        self, name: str, config: QueueConfig | None = None
    ) -> tuple[Queue, bool]:
        """Creates a queue (idempotent). Returns the queue and whether it was created."""
        resp = await self._call(
            self._stubs.queues.create_queue, cv.create_queue_request(name, config)
        )
        return cv.queue_from_proto(resp.queue), resp.created

    async def update_queue(self, name: str, config: QueueConfig) -> Queue:
        """Changes the fields of config that are not None; returns the queue after."""
        resp = await self._call(
            self._stubs.queues.update_queue, cv.update_queue_request(name, config)
        )
        return cv.queue_from_proto(resp.queue)

    async def delete_queue(self, name: str) -> bool:
        """Deletes a queue and all its jobs; False if there was no such queue."""
        req = cv.delete_queue_request(name)
        return (await self._call(self._stubs.queues.delete_queue, req)).deleted

    async def list_queues(self) -> list[Queue]:
        """Every queue with config and stats, by name."""
        resp = await self._call(self._stubs.queues.list_queues, cv.list_queues_request())
        return [cv.queue_from_proto(q) for q in resp.queues]

    async def get_queue(self, name: str) -> Queue:
        """One queue; raises NotFoundError if it does not exist."""
        req = cv.get_queue_request(name)
        return cv.queue_from_proto((await self._call(self._stubs.queues.get_queue, req)).queue)

    # --- WorkerService --------------------------------------------------------------

    async def dequeue(
        self,
        queue: str,
        *,
        limit: int = 1,
        wait: timedelta | None = None,
        worker_id: str = "",
        succeeded: Sequence[JobSuccess] = (),
        failed: Sequence[JobFailure] = (),
        dry_run: bool = False,
    ) -> DequeueResult:
        """Takes up to `limit` due jobs, long-polling up to `wait` when none is due.

        `succeeded`/`failed` are the previous batch's outcomes, applied first.
        """
        req = cv.dequeue_request(queue, limit, wait, worker_id, succeeded, failed, dry_run)
        resp = await self._call(self._stubs.worker.dequeue, req, extra_timeout=wait)
        return cv.dequeue_result(queue, resp)

    async def ack(
        self,
        queue: str,
        *,
        succeeded: Sequence[JobSuccess] = (),
        failed: Sequence[JobFailure] = (),
    ) -> list[JobOutcome]:
        """Reports outcomes; one JobOutcome per job (successes first, then failures)."""
        resp = await self._call(self._stubs.worker.ack, cv.ack_request(queue, succeeded, failed))
        return cv.outcomes_from_proto(resp.results)

    async def checkpoint(
        self, queue: str, checkpoints: Sequence[JobCheckpoint]
    ) -> list[JobOutcome]:
        """Extends claims, replaces bodies or releases running jobs back to PENDING."""
        resp = await self._call(
            self._stubs.worker.checkpoint, cv.checkpoint_request(queue, checkpoints)
        )
        return cv.outcomes_from_proto(resp.results)

    # --- WorkflowService (docs/workflows.md) ------------------------------------------

    async def apply_workflow(self, workflow: Workflow) -> tuple[int, bool]:
        """Defines or changes a workflow; returns (version in force, whether this call
        made it). ValueError first if an input names a job the definition lacks."""
        req = wpb.ApplyWorkflowRequest(workflow=wcv.workflow_to_proto(workflow))
        resp = await self._call(self._stubs.workflows.apply_workflow, req)
        return resp.workflow.version, resp.created

    async def start_instance(
        self, workflow: str, *, events: Sequence[ExternalEvent] = (), keep_open: bool = False
    ) -> Instance:
        """Starts an instance of the workflow's latest version, posting `events` to its
        external inputs; keep_open: it ends only on close_instance or cancel_instance."""
        req = wpb.StartInstanceRequest(
            workflow=workflow, events=wcv.events_to_proto(events), keep_open=keep_open
        )
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.start_instance, req)).instance
        )

    async def post_event(self, instance_id: str, event: ExternalEvent) -> Instance:
        """Posts an event to an external input of a running instance."""
        req = wpb.PostEventRequest(instance_id=instance_id, event=wcv.events_to_proto([event])[0])
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.post_event, req)).instance
        )

    async def get_instance(self, instance_id: str) -> Instance:
        """The instance with every job's state and runs; NotFoundError if there is none."""
        req = wpb.GetInstanceRequest(instance_id=instance_id)
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.get_instance, req)).instance
        )

    async def wait_for_instance(
        self,
        instance_id: str,
        *,
        timeout: timedelta = timedelta(seconds=60),
        poll_interval: timedelta = timedelta(milliseconds=500),
    ) -> Instance:
        """Polls get_instance until the instance has ended and returns it; raises
        DeadlineExceededError if it still runs after `timeout` (at most a day)."""
        wcv.check_wait(timeout, poll_interval)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + timeout.total_seconds()
        while True:
            instance = await self.get_instance(instance_id)
            left = give_up - loop.time()
            if instance.ended:
                return instance
            if left <= 0:
                raise wcv.wait_timed_out(instance, timeout)
            await asyncio.sleep(min(poll_interval.total_seconds(), left))

    async def rerun_job(self, instance_id: str, job: str, run: int) -> Instance:
        """Posts the events that triggered run `run` of `job` again to its inputs."""
        req = wpb.RerunJobRequest(instance_id=instance_id, job=job, run=run)
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.rerun_job, req)).instance
        )

    async def disable_job(self, instance_id: str, job: str) -> Instance:
        """Stops `job` of the instance from running; its events still gather."""
        req = wpb.DisableJobRequest(instance_id=instance_id, job=job)
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.disable_job, req)).instance
        )

    async def enable_job(self, instance_id: str, job: str) -> Instance:
        """Lets a disabled job run again."""
        req = wpb.EnableJobRequest(instance_id=instance_id, job=job)
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.enable_job, req)).instance
        )

    async def close_instance(self, instance_id: str) -> Instance:
        """Lets a keep_open instance end once nothing is runnable or running."""
        req = wpb.CloseInstanceRequest(instance_id=instance_id)
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.close_instance, req)).instance
        )

    async def cancel_instance(self, instance_id: str) -> Instance:
        """Ends a running instance (CANCELLED); its pending queue jobs are deleted."""
        req = wpb.CancelInstanceRequest(instance_id=instance_id)
        return wcv.instance_from_proto(
            (await self._call(self._stubs.workflows.cancel_instance, req)).instance
        )

    def iter_instances(
        self,
        *,
        workflow: str = "",
        state: InstanceState | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[Instance]:
        """Instances, newest first, without their jobs (get_instance has them), fetching a
        page only when the loop reaches it. workflow / state: only those ("" / None: all).
        page_size: 1 to 1,000 (None: the server's 100); InvalidArgumentError at once else."""
        limit = wcv.page_size(page_size)  # checked now, not at the first next()

        async def pages() -> AsyncIterator[Instance]:
            token = ""
            while True:
                req = wcv.list_instances_request(workflow, state, limit, token)
                page = await self._call(self._stubs.workflows.list_instances, req)
                for i in page.instances:
                    yield wcv.instance_from_proto(i)
                token = page.next_page_token
                if not token:
                    return

        return pages()

    # --- ScheduleService ----------------------------------------------------------------

    async def create_schedule(
        self,
        name: str,
        cron: str,
        *,
        workflow: str | None = None,
        events: Sequence[ExternalEvent] = (),
        keep_open: bool = False,
        queue: str | None = None,
        body: bytes = b"",
        overlap: OverlapPolicy = OverlapPolicy.SKIP,
        time_zone: str = "",
        catch_up_window: timedelta | None = None,
        paused: bool = False,
    ) -> tuple[Schedule, bool]:
        """Creates a schedule that starts `workflow` (with `events`) or enqueues `body` on
        `queue` at each time of `cron`; returns (schedule, created). catch_up_window:
        after downtime, fire the latest missed time if it is at most this late."""
        schedule = wcv.schedule_to_proto(
            name,
            cron,
            workflow=workflow,
            events=events,
            keep_open=keep_open,
            queue=queue,
            body=body,
            overlap=overlap,
            time_zone=time_zone,
            catch_up_window=catch_up_window,
        )
        req = spb.CreateScheduleRequest(schedule=schedule, paused=paused)
        resp = await self._call(self._stubs.schedules.create_schedule, req)
        return wcv.schedule_from_proto(resp.schedule), resp.created

    async def update_schedule(
        self,
        name: str,
        cron: str,
        *,
        workflow: str | None = None,
        events: Sequence[ExternalEvent] = (),
        keep_open: bool = False,
        queue: str | None = None,
        body: bytes = b"",
        overlap: OverlapPolicy = OverlapPolicy.SKIP,
        time_zone: str = "",
        catch_up_window: timedelta | None = None,
    ) -> Schedule:
        """Replaces schedule `name`'s whole definition (arguments as create_schedule's; what
        is left out goes back to its default; paused stays as it is). A new cron or time
        zone counts from now. NotFoundError if there is none."""
        schedule = wcv.schedule_to_proto(
            name,
            cron,
            workflow=workflow,
            events=events,
            keep_open=keep_open,
            queue=queue,
            body=body,
            overlap=overlap,
            time_zone=time_zone,
            catch_up_window=catch_up_window,
        )
        req = spb.UpdateScheduleRequest(schedule=schedule)
        return wcv.schedule_from_proto(
            (await self._call(self._stubs.schedules.update_schedule, req)).schedule
        )

    async def get_schedule(self, name: str, *, upcoming: int = 0) -> Schedule:
        """A schedule with its latest fires and its next `upcoming` fire times (0: 5; at
        most 100); NotFoundError if there is none."""
        req = wcv.get_schedule_request(name, upcoming)
        return wcv.schedule_from_proto(
            (await self._call(self._stubs.schedules.get_schedule, req)).schedule
        )

    def iter_schedules(self, *, page_size: int | None = None) -> AsyncIterator[Schedule]:
        """Every schedule, by name, fetching a page only when the loop reaches it.
        page_size: 1 to 1,000 (None: the server's 100); InvalidArgumentError at once else."""
        limit = wcv.page_size(page_size)

        async def pages() -> AsyncIterator[Schedule]:
            token = ""
            while True:
                req = spb.ListSchedulesRequest(limit=limit, page_token=token)
                page = await self._call(self._stubs.schedules.list_schedules, req)
                for s in page.schedules:
                    yield wcv.schedule_from_proto(s)
                token = page.next_page_token
                if not token:
                    return

        return pages()

    async def pause_schedule(self, name: str) -> Schedule:
        """Stops a schedule from firing; times that pass meanwhile are not caught up."""
        req = spb.PauseScheduleRequest(name=name)
        return wcv.schedule_from_proto(
            (await self._call(self._stubs.schedules.pause_schedule, req)).schedule
        )

    async def resume_schedule(self, name: str) -> Schedule:
        """Lets a paused schedule fire again, from the first time after now."""
        req = spb.ResumeScheduleRequest(name=name)
        return wcv.schedule_from_proto(
            (await self._call(self._stubs.schedules.resume_schedule, req)).schedule
        )

    async def delete_schedule(self, name: str) -> bool:
        """Deletes a schedule (what it started goes on); False if there was none."""
        req = spb.DeleteScheduleRequest(name=name)
        return (await self._call(self._stubs.schedules.delete_schedule, req)).deleted
