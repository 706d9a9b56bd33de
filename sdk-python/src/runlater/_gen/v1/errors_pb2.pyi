from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_QUEUE_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_QUEUE_NAME: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_PRIORITY: _ClassVar[ErrorReason]
    ERROR_REASON_BODY_TOO_LARGE: _ClassVar[ErrorReason]
    ERROR_REASON_BATCH_TOO_LARGE: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_ARGUMENT: _ClassVar[ErrorReason]
    ERROR_REASON_SHUTTING_DOWN: _ClassVar[ErrorReason]
    ERROR_REASON_NO_BROKER: _ClassVar[ErrorReason]
    ERROR_REASON_WORKFLOW_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_INSTANCE_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_WORKFLOW_RULE: _ClassVar[ErrorReason]
    ERROR_REASON_CONFLICT: _ClassVar[ErrorReason]
    ERROR_REASON_UNSUPPORTED: _ClassVar[ErrorReason]
    ERROR_REASON_UNAUTHENTICATED: _ClassVar[ErrorReason]
    ERROR_REASON_PERMISSION_DENIED: _ClassVar[ErrorReason]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_QUEUE_NOT_FOUND: ErrorReason
ERROR_REASON_INVALID_QUEUE_NAME: ErrorReason
ERROR_REASON_INVALID_PRIORITY: ErrorReason
ERROR_REASON_BODY_TOO_LARGE: ErrorReason
ERROR_REASON_BATCH_TOO_LARGE: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_SHUTTING_DOWN: ErrorReason
ERROR_REASON_NO_BROKER: ErrorReason
ERROR_REASON_WORKFLOW_NOT_FOUND: ErrorReason
ERROR_REASON_INSTANCE_NOT_FOUND: ErrorReason
ERROR_REASON_WORKFLOW_RULE: ErrorReason
ERROR_REASON_CONFLICT: ErrorReason
ERROR_REASON_UNSUPPORTED: ErrorReason
ERROR_REASON_UNAUTHENTICATED: ErrorReason
ERROR_REASON_PERMISSION_DENIED: ErrorReason

class ErrorInfo(_message.Message):
    __slots__ = ("reason", "field")
    REASON_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    reason: ErrorReason
    field: str
    def __init__(self, reason: _Optional[_Union[ErrorReason, str]] = ..., field: _Optional[str] = ...) -> None: ...
