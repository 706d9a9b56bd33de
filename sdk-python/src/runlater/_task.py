"""Tasks: a function bound to a queue. Producers enqueue calls of it, workers run them.

    @runlater.task(client, "emails")
    def send_email(to: str, subject: str = "Hello") -> str: ...

    send_email.enqueue(to="ada@example.com")            # a job {"to": "ada@example.com"}
    send_email.options(priority=2).enqueue(to="grace@example.com")
    app.register_task(send_email)                       # a Worker runs send_email(**body)

The arguments travel as one JSON object keyed by parameter name, so the function's
signature is the contract between producer and worker (as Celery's `@app.task` and
Dramatiq's actors, with keyword arguments only: a JSON object has names, not positions).
A parameter annotated with a dataclass or a pydantic model is sent as an object of its
fields and rebuilt (and validated) on the worker; pydantic is never imported here.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Generic, ParamSpec, TypeVar, overload

from ._body import to_json
from ._task_args import Models, load_arguments, resolve_models
from ._types import DequeuedJob, JobSpec
from .async_client import AsyncClient
from .client import Client

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class EnqueueOptions:
    """How a task's jobs are enqueued; zero values take the queue's defaults."""

    priority: int = 0
    run_after: datetime | timedelta | None = None
    attempts_allowed: int = 0
    idempotency_key: str = ""
    ordering_key: str = ""


_UNSET: Any = object()


class Task(Generic[P, R]):
    """A function bound to a queue (made by `runlater.task`).

    Calling the task runs the function here, as a plain call. `enqueue(...)` (with a
    Client) or `await aenqueue(...)` (with an AsyncClient) sends the call as a job
    instead, and a Worker that registered the task (`app.register_task(task)`) runs it.
    """

    def __init__(
        self,
        fn: Callable[P, R],
        queue: str,
        client: Client | AsyncClient | None,
        options: EnqueueOptions,
    ) -> None:
        self.fn = fn
        self.queue = queue
        self.client = client
        self.enqueue_options = options
        self.name = getattr(fn, "__qualname__", repr(fn))
        self.signature = inspect.signature(fn)
        self._models: Models | None = None
        functools.update_wrapper(self, fn)

    def __repr__(self) -> str:
        return f"<Task {self.name} on queue {self.queue!r}>"

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    # --- producing ------------------------------------------------------------------

    def options(
        self,
        *,
        client: Client | AsyncClient = _UNSET,
        priority: int = _UNSET,
        run_after: datetime | timedelta | None = _UNSET,
        attempts_allowed: int = _UNSET,
        idempotency_key: str = _UNSET,
        ordering_key: str = _UNSET,
    ) -> Task[P, R]:
        """A copy of the task that enqueues with these settings (the others kept).

        run_after is a datetime or a delay from now; the idempotency key makes a repeat
        enqueue return the first job; jobs sharing an ordering key run one at a time.

            send_email.options(run_after=timedelta(minutes=5), idempotency_key="w-42")
                      .enqueue(to="ada@example.com")
        """
        given: dict[str, Any] = {
            "priority": priority,
            "run_after": run_after,
            "attempts_allowed": attempts_allowed,
            "idempotency_key": idempotency_key,
            "ordering_key": ordering_key,
        }
        options = replace(
            self.enqueue_options, **{k: v for k, v in given.items() if v is not _UNSET}
        )
        if client is not _UNSET:
            _check_client(client)
        chosen = self.client if client is _UNSET else client
        copy = Task(self.fn, self.queue, chosen, options)
        copy._models = self._models
        return copy

    def spec(self, *args: P.args, **kwargs: P.kwargs) -> JobSpec:
        """The job a call would enqueue, for `client.enqueue_many([...])` batches.

        Raises TypeError if the arguments do not fit the function's signature or one is
        not JSON (naming it)."""
        o = self.enqueue_options
        return JobSpec(
            queue=self.queue,
            body=self._body(args, kwargs),
            priority=o.priority,
            run_after=o.run_after,
            attempts_allowed=o.attempts_allowed,
            idempotency_key=o.idempotency_key,
            ordering_key=o.ordering_key,
        )

    def enqueue(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """Enqueues a call with the task's Client; returns the job's id."""
        spec = self.spec(*args, **kwargs)
        client = self.client
        if not isinstance(client, Client):
            raise TypeError(self._client_needed("enqueue", "a Client", "aenqueue"))
        return client.enqueue_many([spec])[0]

    async def aenqueue(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """Enqueues a call with the task's AsyncClient; returns the job's id."""
        spec = self.spec(*args, **kwargs)
        client = self.client
        if not isinstance(client, AsyncClient):
            raise TypeError(self._client_needed("aenqueue", "an AsyncClient", "enqueue"))
        return (await client.enqueue_many([spec]))[0]

    def _client_needed(self, method: str, kind: str, other: str) -> str:
        if self.client is None:
            return (
                f"task {self.name} has no client to {method} with: pass one to "
                f"runlater.task(client, {self.queue!r}) or to .options(client=...)"
            )
        return (
            f"task {self.name}.{method}() needs {kind}, and it has a "
            f"{type(self.client).__name__}: call .{other}() or use .options(client=...)"
        )

    def _body(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bytes:
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"task {self.name}: {err}") from None
        arguments: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            if self.signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
                arguments.update(value)
            else:
                arguments[name] = value
        try:
            return to_json(arguments)
        except (TypeError, ValueError):
            raise TypeError(self._not_json(arguments)) from None

    def _not_json(self, arguments: dict[str, Any]) -> str:
        """Names the first argument JSON cannot carry, and why."""
        for name, value in arguments.items():
            try:
                to_json(value)
            except (TypeError, ValueError) as err:
                return (
                    f"task {self.name}: argument {name!r} cannot be sent as JSON ({err}); "
                    "pass JSON values, dataclasses or pydantic models"
                )
        return f"task {self.name}: the arguments cannot be sent as JSON"

    # --- running --------------------------------------------------------------------

    def models(self) -> Models:
        """The parameters annotated with a dataclass or a pydantic model (resolved once,
        when a worker registers the task: the annotations' names must exist by then)."""
        if self._models is None:
            self._models = resolve_models(self.fn, self.name)
        return self._models

    def handler(self) -> Callable[[DequeuedJob], Any]:
        """The Worker handler that runs this task: a coroutine function for an `async def`
        task. A body that is not a JSON object of the function's arguments fails the job
        for good (DoNotRetry), saying why: another attempt would not change it."""
        models = self.models()
        fn: Callable[..., Any] = self.fn

        if inspect.iscoroutinefunction(fn):

            async def run_async(job: DequeuedJob) -> Any:
                kwargs = load_arguments(job, self.name, self.signature, models)
                return await fn(**kwargs)

            return run_async

        def run(job: DequeuedJob) -> Any:
            return fn(**load_arguments(job, self.name, self.signature, models))

        return run


def _check_client(client: object) -> None:
    if not isinstance(client, (Client, AsyncClient)):
        raise TypeError(f"client must be a Client or an AsyncClient, not {type(client).__name__}")


def _check_parameters(fn: Callable[..., Any]) -> None:
    """Every parameter must be passable by name: the job's body is a JSON object."""
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL):
            shown = f"*{param.name}" if param.kind is param.VAR_POSITIONAL else param.name
            raise TypeError(
                f"task {getattr(fn, '__qualname__', fn)}: parameter {shown} cannot be "
                "passed by name; a task's arguments travel as a JSON object of named values"
            )


@overload
def task(queue: str, /) -> Callable[[Callable[P, R]], Task[P, R]]: ...
@overload
def task(client: Client | AsyncClient, queue: str, /) -> Callable[[Callable[P, R]], Task[P, R]]: ...


def task(
    client_or_queue: Client | AsyncClient | str, queue: str | None = None, /
) -> Callable[[Callable[P, R]], Task[P, R]]:
    """Decorator: binds a function to a queue as a Task.

        @runlater.task(client, "emails")     # enqueue with this Client (or AsyncClient)
        @runlater.task("emails")             # a worker-side task; .options(client=...) to send

    The function may be `async def`; its parameters must be passable by name.
    """
    client: Client | AsyncClient | None = None
    if isinstance(client_or_queue, str):
        if queue is not None:
            raise TypeError(
                f"task(queue) or task(client, queue): the client comes first, not the str "
                f"{client_or_queue!r}"
            )
        queue = client_or_queue
    else:
        _check_client(client_or_queue)
        client = client_or_queue
    if not isinstance(queue, str) or not queue:
        raise TypeError(f"queue must be a non-empty str, not {queue!r}")
    queue_name: str = queue  # narrowed, for the closure

    def bind(fn: Callable[P, R]) -> Task[P, R]:
        if not callable(fn):
            raise TypeError(f"@task decorates a function, not a {type(fn).__name__}")
        _check_parameters(fn)
        return Task(fn, queue_name, client, EnqueueOptions())

    return bind
