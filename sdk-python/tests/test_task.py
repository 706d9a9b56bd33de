"""runlater.task: a function bound to a queue. enqueue()/aenqueue() send its keyword
arguments as JSON; a Worker that registered it calls it with them."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from helpers import Address, QueueFactory, Signup, running, wait_for

import runlater
from runlater import AsyncClient, Client, Job, JobState, Worker


def _job(client: Client, job_id: str) -> Job:
    job = client.get_job(job_id, include_body=True)
    assert job is not None
    return job


def _finished(client: Client, job_id: str) -> Job | None:
    job = _job(client, job_id)
    return job if job.state in (JobState.SUCCEEDED, JobState.FAILED) else None


def _wait_finished(client: Client, job_id: str) -> Job:
    return wait_for(lambda: _finished(client, job_id))


def test_enqueue_sends_the_arguments_by_name_as_json(
    client: Client, make_queue: QueueFactory
) -> None:
    @runlater.task(client, make_queue())
    def send_email(to: str, subject: str = "Hello", **headers: str) -> str:
        return f"sent to {to}"

    job_id = send_email.enqueue("ada@example.com", reply_to="grace@example.com")
    # Positional arguments are named; defaults are left to the worker; **kwargs flattened.
    assert _job(client, job_id).json() == {"to": "ada@example.com", "reply_to": "grace@example.com"}
    assert send_email("linus@example.com") == "sent to linus@example.com"  # a plain call


def test_aenqueue_sends_with_an_async_client(
    server_url: str, client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()

    async def produce() -> str:
        async with AsyncClient(server_url) as c:

            @runlater.task(c, q)
            async def resize(image: str, width: int) -> None: ...

            return await resize.aenqueue(image="a.png", width=64)

    assert _job(client, asyncio.run(produce())).json() == {"image": "a.png", "width": 64}


def test_options_set_how_the_job_is_enqueued_without_touching_the_task(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue(priorities=3)

    @runlater.task(client, q)
    def report(day: str) -> None: ...

    later = datetime.now(timezone.utc) + timedelta(hours=1)
    urgent = report.options(priority=2, run_after=later, idempotency_key="r-1")
    first = urgent.options(ordering_key="reports", attempts_allowed=3).enqueue(day="mon")
    assert urgent.enqueue(day="mon") == first  # the idempotency key
    job = _job(client, first)
    assert (job.priority, job.ordering_key, job.attempts_allowed) == (2, "reports", 3)
    assert job.run_after is not None and abs(job.run_after - later) < timedelta(seconds=1)
    plain = _job(client, report.enqueue(day="tue"))
    assert (plain.priority, plain.ordering_key) == (1, "")  # the queue's default priority


def test_spec_makes_jobs_for_a_batch(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()

    @runlater.task(q)  # no client needed to make specs
    def ping(n: int) -> None: ...

    ids = client.enqueue_many([ping.spec(n=1), ping.options(priority=1).spec(n=2)])
    assert [_job(client, i).json() for i in ids] == [{"n": 1}, {"n": 2}]


def test_arguments_that_do_not_fit_the_signature_are_refused_before_sending(
    client: Client, make_queue: QueueFactory
) -> None:
    @runlater.task(client, make_queue())
    def send_email(to: str) -> None: ...

    with pytest.raises(TypeError, match="task .*send_email: missing a required argument: 'to'"):
        send_email.enqueue()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'cc'"):
        send_email.enqueue(to="a", cc="b")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="argument 'to' cannot be sent as JSON .*datetime"):
        send_email.enqueue(to=datetime.now())  # type: ignore[arg-type]


def test_enqueue_without_the_right_client_says_what_to_do(
    server_url: str, client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()

    @runlater.task(q)
    def unbound(n: int) -> None: ...

    with pytest.raises(TypeError, match=r"has no client to enqueue with: pass one to runlater"):
        unbound.enqueue(n=1)
    assert unbound.options(client=client).enqueue(n=1)
    with pytest.raises(TypeError, match=r"enqueue\(\) needs a Client, and it has a AsyncClient"):
        unbound.options(client=AsyncClient(server_url)).enqueue(n=1)
    with pytest.raises(TypeError, match=r"aenqueue\(\) needs an AsyncClient, and it has a Client"):
        asyncio.run(unbound.options(client=client).aenqueue(n=1))


def test_task_refuses_what_cannot_work(client: Client) -> None:
    with pytest.raises(TypeError, match="cannot be passed by name"):

        @runlater.task(client, "q")
        def positional(a: int, /) -> None: ...

    with pytest.raises(TypeError, match=r"parameter \*args cannot be passed by name"):

        @runlater.task("q")
        def star(*args: int) -> None: ...

    with pytest.raises(TypeError, match="client must be a Client or an AsyncClient, not int"):
        runlater.task(8080, "q")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="the client comes first, not the str 'http://x'"):
        runlater.task("http://x", "q")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="queue must be a non-empty str"):
        runlater.task(client, "")


# --- the worker side ----------------------------------------------------------------------


def test_a_worker_runs_the_task_with_its_arguments(
    client: Client, make_queue: QueueFactory, dequeue_mode: str
) -> None:
    q_sync, q_async = make_queue(), make_queue()
    calls: list[tuple[str, Any]] = []

    @runlater.task(client, q_sync)
    def ship(order: int, address: Address, note: str | None = None) -> str:
        calls.append(("ship", (order, address, note)))
        return f"shipped {order} to {address.city}"

    @runlater.task(client, q_async)
    async def welcome(signup: Signup) -> str:
        calls.append(("welcome", signup))
        return f"welcomed {signup.email}"

    app = Worker(client, dequeue_mode=dequeue_mode)  # type: ignore[arg-type]
    app.register_task(ship)
    app.register_task(welcome, concurrency=2)
    shipped = ship.enqueue(order=7, address=Address("Paris", "75001"))
    welcomed = welcome.enqueue(signup=Signup(email="ada@example.com", seats=3))
    with running(app):
        done = [_wait_finished(client, i) for i in (shipped, welcomed)]
    assert [(j.state, j.custom_status) for j in done] == [
        (JobState.SUCCEEDED, "shipped 7 to Paris"),
        (JobState.SUCCEEDED, "welcomed ada@example.com"),
    ]
    assert sorted(calls, key=lambda c: c[0]) == [
        ("ship", (7, Address("Paris", "75001"), None)),
        ("welcome", Signup(email="ada@example.com", seats=3)),
    ]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ("not json", "the body of job {id} is not JSON: Expecting value at character 0"),
        ([1, 2], "the body of job {id} is an array, not a JSON object of arguments"),
        ({"order": 1}, "the job's arguments do not fit: missing a required argument: 'address'"),
        (
            {"order": 1, "address": {"city": "Paris"}},
            "argument 'address': Address.__init__() missing 1 required positional argument",
        ),
        ({"order": 1, "address": "Paris"}, "argument 'address' must be a JSON object"),
        ({"signup": {"email": "a", "seats": "many"}}, "argument 'signup': 1 validation error"),
    ],
)
def test_a_body_the_task_cannot_take_fails_the_job_for_good_saying_why(
    client: Client, make_queue: QueueFactory, body: Any, status: str
) -> None:
    q_ship, q_welcome = make_queue(), make_queue()

    @runlater.task(q_ship)
    def ship(order: int, address: Address) -> None: ...

    @runlater.task(q_welcome)
    def welcome(signup: Signup) -> None: ...

    app = Worker(client, dequeue_mode="poll", poll_wait=timedelta(milliseconds=500))
    app.register_task(ship)
    app.register_task(welcome)
    queue = q_welcome if "signup" in str(body) else q_ship
    job_id = client.enqueue(queue, body)
    with running(app):
        job = _wait_finished(client, job_id)
    assert job.state is JobState.FAILED
    assert job.attempts_remaining > 0  # not retried: another attempt reads the same body
    assert status.format(id=job_id) in job.custom_status


def test_register_task_fails_on_annotations_that_do_not_resolve(client: Client) -> None:
    @runlater.task("q")
    def later(x: NotYetDefined) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="cannot resolve its annotations .*NotYetDefined"):
        Worker(client).register_task(later)
