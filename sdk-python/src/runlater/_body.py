"""Job bodies: opaque bytes on the wire, made from what producers usually have.

The rule is the TypeScript SDK's: bytes are sent as they are, a str as UTF-8, anything
else as JSON (compact, UTF-8). Dataclass instances and pydantic models count as JSON
objects of their fields. Handlers decode bodies back with job.text() / job.json().
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from ._validate import invalid

# What enqueue accepts besides bytes and str: any value json.dumps takes (and dataclass
# instances or pydantic models, which the type cannot name without importing pydantic).
JsonValue: TypeAlias = None | bool | int | float | str | Sequence[Any] | Mapping[str, Any] | object
Body: TypeAlias = bytes | bytearray | memoryview | str | JsonValue


def _as_json(value: object) -> object:
    """json.dumps' `default`: the fields of a dataclass instance or a pydantic model."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    pydantic = sys.modules.get("pydantic")  # a model's module is imported already
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"a value of type {type(value).__name__} is not JSON")


def to_json(value: object) -> bytes:
    """Compact JSON, non-ASCII kept as UTF-8 (as JSON.stringify); NaN and infinities are
    refused (JSON has none; JSON.stringify would quietly send null). Raises TypeError or
    ValueError naming what cannot be encoded."""
    text = json.dumps(
        value, default=_as_json, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )
    return text.encode()


def encode_body(body: Body, field: str) -> bytes:
    """A body as the bytes sent: bytes as they are, a str as UTF-8, anything else as JSON.

    A value JSON cannot carry (an object of another kind, NaN, a circular list) raises the
    InvalidArgumentError a request field the wire cannot carry raises, naming `field`."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode()
    try:
        return to_json(body)
    except (TypeError, ValueError) as err:
        raise invalid(
            field,
            f"{field} must be bytes, a str or a JSON value (dict, list, number, bool, None, "
            f"a dataclass or a pydantic model): {err}",
        ) from err


def decode_text(body: bytes, job_id: str) -> str:
    try:
        return body.decode()
    except UnicodeDecodeError as err:
        raise ValueError(
            f"the body of job {job_id} is not UTF-8 text: byte {err.start} is "
            f"{body[err.start : err.start + 1]!r}"
        ) from err


def decode_json(body: bytes, job_id: str) -> Any:
    """The body parsed as JSON; a ValueError naming the job and where parsing failed."""
    text = decode_text(body, job_id)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        start = _preview(text)
        raise ValueError(
            f"the body of job {job_id} is not JSON: {err.msg} at character {err.pos} "
            f"(it starts {start!r})"
        ) from err


def _preview(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
