"""Request fields checked on the client: a value the wire cannot carry becomes an
InvalidArgumentError naming the field (as the server names it) and its bounds.

The fast path is protobuf's own constructor; only when protobuf refuses a value are the
fields tried one by one to find the one at fault and say what it accepts.
"""

from __future__ import annotations

from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from ._errors import ErrorReason, InvalidArgumentError

_M = TypeVar("_M", bound=Message)

_INT_RANGES = {
    FieldDescriptor.CPPTYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.CPPTYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.CPPTYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.CPPTYPE_INT64: (-(2**63), 2**63 - 1),
}
_KINDS = {
    FieldDescriptor.CPPTYPE_STRING: "str",
    FieldDescriptor.CPPTYPE_BOOL: "bool",
    FieldDescriptor.CPPTYPE_DOUBLE: "float",
    FieldDescriptor.CPPTYPE_FLOAT: "float",
}


def invalid(
    field: str, message: str, reason: ErrorReason = ErrorReason.INVALID_ARGUMENT
) -> InvalidArgumentError:
    """The error a request builder raises for a value it cannot send."""
    return InvalidArgumentError("invalid_argument", message, reason, field)


def _field_error(fd: Any, path: str, value: object) -> InvalidArgumentError:
    """Why field `fd` (a FieldDescriptor; named `path` in the request) cannot hold `value`."""
    reason = ErrorReason.INVALID_PRIORITY if fd.name == "priority" else ErrorReason.INVALID_ARGUMENT
    got = f"{type(value).__name__} {value!r}"
    bounds = _INT_RANGES.get(fd.cpp_type)
    if bounds is not None:
        low, high = bounds
        if isinstance(value, int) and not isinstance(value, bool):
            return invalid(path, f"{path} is {value}; it must be from {low} to {high}", reason)
        return invalid(path, f"{path} must be an int from {low} to {high}, not {got}", reason)
    if fd.type == FieldDescriptor.TYPE_BYTES:
        kind = "bytes"
    else:
        kind = _KINDS.get(fd.cpp_type, fd.message_type.name if fd.message_type else "value")
    if fd.is_repeated:
        return invalid(path, f"{path} must be a sequence of {kind}, not {got}", reason)
    article = "" if kind == "bytes" else "a "
    return invalid(path, f"{path} must be {article}{kind}, not {got}", reason)


def new(cls: type[_M], prefix: str = "", **values: Any) -> _M:
    """cls(**values), with an InvalidArgumentError naming the field ({prefix}name) that
    cannot hold its value instead of protobuf's TypeError or ValueError."""
    try:
        return cls(**values)
    except (TypeError, ValueError) as err:
        raise _diagnose(cls, prefix, values, err) from err


def add(container: Any, cls: type[Message], prefix: str, **values: Any) -> Any:
    """container.add(**values) (a repeated field of cls), with new()'s errors."""
    try:
        return container.add(**values)
    except (TypeError, ValueError) as err:
        raise _diagnose(cls, prefix, values, err) from err


def set_field(msg: Message, prefix: str, name: str, value: object) -> None:
    """setattr(msg, name, value), with new()'s errors."""
    try:
        setattr(msg, name, value)
    except (TypeError, ValueError) as err:
        raise _diagnose(type(msg), prefix, {name: value}, err) from err


def _diagnose(
    cls: type[Message], prefix: str, values: dict[str, Any], err: Exception
) -> InvalidArgumentError:
    for name, value in values.items():
        try:
            cls(**{name: value})
        except (TypeError, ValueError):
            return _field_error(cls.DESCRIPTOR.fields_by_name[name], prefix + name, value)
    return invalid(prefix.rstrip("."), f"cannot send {cls.DESCRIPTOR.name}: {err}")
