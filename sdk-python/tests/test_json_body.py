"""Bodies as the TypeScript SDK sends them: bytes as they are, a str as UTF-8, anything else
as JSON; job.json() / job.text() read them back, on looked-up and on dequeued jobs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers import Address, QueueFactory, Signup, running, wait_for

from runlater import AsyncClient, Client, DequeuedJob, JobSpec, Worker


@pytest.mark.parametrize(
    ("body", "sent"),
    [
        (b"\x00raw", b"\x00raw"),
        (bytearray(b"ab"), b"ab"),
        ("text, not JSON: é", "text, not JSON: é".encode()),
        (
            {"to": "ada@example.com", "n": [1, 2.5, None, True]},
            b'{"to":"ada@example.com","n":[1,2.5,null,true]}',
        ),
        (["a", "b"], b'["a","b"]'),
        (("a", 1), b'["a",1]'),
        (42, b"42"),
        (None, b"null"),
        (False, b"false"),
        ({"name": "José"}, '{"name":"José"}'.encode()),  # UTF-8, not \\u escapes
        (Address("Paris", "75001"), b'{"city":"Paris","zip":"75001"}'),
        (Signup(email="ada@example.com"), b'{"email":"ada@example.com","seats":1}'),
    ],
)
def test_enqueue_sends_bytes_and_str_as_they_are_and_anything_else_as_json(
    client: Client, make_queue: QueueFactory, body: Any, sent: bytes
) -> None:
    job_id = client.enqueue(make_queue(), body)
    job = client.get_job(job_id, include_body=True)
    assert job is not None
    assert job.body == sent


def test_async_enqueue_and_enqueue_many_follow_the_same_rule(
    server_url: str, client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()

    async def produce() -> list[str]:
        async with AsyncClient(server_url) as c:
            first = await c.enqueue(q, {"a": 1})
            return [first, *await c.enqueue_many([JobSpec(q, [1]), JobSpec(q, "x")])]

    ids = asyncio.run(produce())
    jobs = client.get_jobs(ids, include_body=True).jobs
    assert [j.body for j in jobs] == [b'{"a":1}', b"[1]", b"x"]


def test_a_looked_up_job_decodes_its_body(client: Client, make_queue: QueueFactory) -> None:
    q = make_queue()
    job = client.get_job(client.enqueue(q, {"to": "ada@example.com"}), include_body=True)
    assert job is not None
    assert job.json() == {"to": "ada@example.com"}
    assert job.text() == '{"to":"ada@example.com"}'


def test_json_of_a_body_that_is_not_json_names_the_job_and_the_place(
    client: Client, make_queue: QueueFactory
) -> None:
    q = make_queue()
    job = client.get_job(client.enqueue(q, "hello world"), include_body=True)
    assert job is not None
    with pytest.raises(ValueError) as info:
        job.json()
    assert str(info.value) == (
        f"the body of job {job.job_id} is not JSON: Expecting value at character 0 "
        "(it starts 'hello world')"
    )


def test_text_of_a_body_that_is_not_utf8_says_where(
    client: Client, make_queue: QueueFactory
) -> None:
    job = client.get_job(client.enqueue(make_queue(), b"ok\xff"), include_body=True)
    assert job is not None
    with pytest.raises(ValueError, match=rf"body of job {job.job_id} is not UTF-8 text: byte 2"):
        job.text()
    with pytest.raises(ValueError, match="not UTF-8"):
        job.json()


def test_a_worker_handler_reads_the_json_body(
    client: Client, make_queue: QueueFactory, dequeue_mode: str
) -> None:
    q = make_queue()
    seen: list[Any] = []
    app = Worker(client, dequeue_mode=dequeue_mode)  # type: ignore[arg-type]

    @app.handler(q)
    def handle(job: DequeuedJob) -> str:
        seen.append(job.json())
        return "ok"

    client.enqueue(q, {"to": "ada@example.com", "tags": ["a"]})
    with running(app):
        wait_for(lambda: seen)
    assert seen == [{"to": "ada@example.com", "tags": ["a"]}]
