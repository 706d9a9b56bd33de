"""One exception hierarchy for every failed call, whatever the wire protocol.

Connect errors are translated at the edge (``translate``) so user code never imports
connectrpc: it catches ``RunlaterError`` or one of its subclasses and may branch on
``.code`` (the Connect code string) or ``.reason`` (from the runlater.v1.ErrorInfo detail).
"""

from __future__ import annotations

import enum

from connectrpc.errors import ConnectError

from ._gen.v1 import errors_pb2


class ErrorReason(enum.IntEnum):
    """Machine-readable reason of an error; mirrors runlater.v1.ErrorReason."""

    UNSPECIFIED = errors_pb2.ERROR_REASON_UNSPECIFIED
    QUEUE_NOT_FOUND = errors_pb2.ERROR_REASON_QUEUE_NOT_FOUND
    INVALID_QUEUE_NAME = errors_pb2.ERROR_REASON_INVALID_QUEUE_NAME
    INVALID_PRIORITY = errors_pb2.ERROR_REASON_INVALID_PRIORITY
    BODY_TOO_LARGE = errors_pb2.ERROR_REASON_BODY_TOO_LARGE
    BATCH_TOO_LARGE = errors_pb2.ERROR_REASON_BATCH_TOO_LARGE
    INVALID_ARGUMENT = errors_pb2.ERROR_REASON_INVALID_ARGUMENT
    SHUTTING_DOWN = errors_pb2.ERROR_REASON_SHUTTING_DOWN
    NO_BROKER = errors_pb2.ERROR_REASON_NO_BROKER
    WORKFLOW_NOT_FOUND = errors_pb2.ERROR_REASON_WORKFLOW_NOT_FOUND
    INSTANCE_NOT_FOUND = errors_pb2.ERROR_REASON_INSTANCE_NOT_FOUND
    WORKFLOW_RULE = errors_pb2.ERROR_REASON_WORKFLOW_RULE
    CONFLICT = errors_pb2.ERROR_REASON_CONFLICT
    UNSUPPORTED = errors_pb2.ERROR_REASON_UNSUPPORTED
    UNAUTHENTICATED = errors_pb2.ERROR_REASON_UNAUTHENTICATED
    PERMISSION_DENIED = errors_pb2.ERROR_REASON_PERMISSION_DENIED


class RunlaterError(Exception):
    """A runlater call failed.

    Attributes:
        code: the Connect error code, e.g. ``"not_found"``.
        reason: the ErrorInfo reason, or None when the server sent no ErrorInfo.
        field: the request field at fault (ErrorInfo.field), or "".
        message: the server's message.
    """

    def __init__(
        self,
        code: str,
        message: str,
        reason: ErrorReason | None = None,
        field: str = "",
    ) -> None:
        super().__init__(f"[{code}] {message}" if message else f"[{code}]")
        self.code = code
        self.message = message
        self.reason = reason
        self.field = field


class InvalidArgumentError(RunlaterError):
    """The request was malformed (bad queue name, priority, field...)."""


class NotFoundError(RunlaterError):
    """The named queue (or other resource) does not exist."""


class ResourceExhaustedError(RunlaterError):
    """A body or batch was too large, or a limit was hit."""


class UnavailableError(RunlaterError):
    """The server could not be reached or is shutting down; retrying later may work."""


class DeadlineExceededError(RunlaterError):
    """The call's deadline passed before the server answered."""


class FailedPreconditionError(RunlaterError):
    """The system is not in a state the call requires."""


_BY_CODE: dict[str, type[RunlaterError]] = {
    "invalid_argument": InvalidArgumentError,
    "not_found": NotFoundError,
    "resource_exhausted": ResourceExhaustedError,
    "unavailable": UnavailableError,
    "deadline_exceeded": DeadlineExceededError,
    "failed_precondition": FailedPreconditionError,
}

_ERROR_INFO_TYPE = errors_pb2.ErrorInfo.DESCRIPTOR.full_name


def translate(err: ConnectError) -> RunlaterError:
    """Maps a ConnectError (any protocol) to the matching RunlaterError subclass."""
    code = err.code.value
    reason: ErrorReason | None = None
    field = ""
    for detail in err.details:
        if detail.type_name != _ERROR_INFO_TYPE:
            continue
        info = errors_pb2.ErrorInfo.FromString(detail.message_bytes)
        try:
            reason = ErrorReason(info.reason)
        except ValueError:  # a reason newer than this SDK
            reason = ErrorReason.UNSPECIFIED
        field = info.field
        break
    cls = _BY_CODE.get(code, RunlaterError)
    return cls(code, err.message, reason, field)
