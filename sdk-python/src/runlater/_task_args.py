"""A task's arguments on the worker: the job's JSON object, checked against the function.

Parameters annotated with a dataclass or a pydantic model (or `Model | None`) get an
instance built from their JSON object: a dataclass by calling it with the fields (nested
dataclasses stay dicts), a pydantic model with `model_validate` (its full validation).
Whatever does not fit fails the job for good: another attempt would read the same body.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
import typing
from collections.abc import Callable
from typing import Any, Union

from ._types import DequeuedJob
from .control import DoNotRetry

# Parameter name -> the class to build its argument with.
Models = dict[str, type]


def _model_class(annotation: object) -> type | None:
    """The dataclass or pydantic model an annotation names, alone or with None."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        others = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(others) != 1:
            return None
        annotation = others[0]
    if not isinstance(annotation, type):
        return None
    if dataclasses.is_dataclass(annotation):
        return annotation
    pydantic = sys.modules.get("pydantic")  # a model's module imported it already
    if pydantic is not None and issubclass(annotation, pydantic.BaseModel):
        return annotation
    return None


def resolve_models(fn: Callable[..., Any], name: str) -> Models:
    try:
        hints = typing.get_type_hints(fn)
    except NameError as err:
        raise TypeError(
            f"task {name}: cannot resolve its annotations ({err}); define the classes they "
            "name before the worker registers the task"
        ) from err
    models: Models = {}
    for param in inspect.signature(fn).parameters:
        cls = _model_class(hints.get(param))
        if cls is not None:
            models[param] = cls
    return models


def _build(cls: type, value: object, task: str, param: str) -> object:
    if dataclasses.is_dataclass(cls):
        if not isinstance(value, dict):
            raise DoNotRetry(
                f"task {task}: argument {param!r} must be a JSON object of "
                f"{cls.__name__}'s fields, not {_kind(value)}"
            )
        try:
            return cls(**value)
        except TypeError as err:
            raise DoNotRetry(f"task {task}: argument {param!r}: {err}") from err
    try:
        return cls.model_validate(value)  # type: ignore[attr-defined]
    except ValueError as err:  # pydantic's ValidationError
        raise DoNotRetry(f"task {task}: argument {param!r}: {err}") from err


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def load_arguments(
    job: DequeuedJob, task: str, signature: inspect.Signature, models: Models
) -> dict[str, Any]:
    """The keyword arguments a job's body holds for the task's function."""
    try:
        body = job.json()
    except ValueError as err:
        raise DoNotRetry(f"task {task}: {err}") from err
    if not isinstance(body, dict):
        raise DoNotRetry(
            f"task {task}: the body of job {job.job_id} is {_kind(body)}, not a JSON object "
            "of arguments"
        )
    for param, cls in models.items():
        if body.get(param) is not None:
            body[param] = _build(cls, body[param], task, param)
    try:
        signature.bind(**body)
    except TypeError as err:
        raise DoNotRetry(f"task {task}: the job's arguments do not fit: {err}") from err
    return body
