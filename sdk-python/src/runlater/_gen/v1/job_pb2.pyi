import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATE_UNSPECIFIED: _ClassVar[JobState]
    JOB_STATE_PENDING: _ClassVar[JobState]
    JOB_STATE_RUNNING: _ClassVar[JobState]
    JOB_STATE_SUCCEEDED: _ClassVar[JobState]
    JOB_STATE_FAILED: _ClassVar[JobState]
JOB_STATE_UNSPECIFIED: JobState
JOB_STATE_PENDING: JobState
JOB_STATE_RUNNING: JobState
JOB_STATE_SUCCEEDED: JobState
JOB_STATE_FAILED: JobState

class JobSpec(_message.Message):
    __slots__ = ("queue", "body", "priority", "run_after", "attempts_allowed", "idempotency_key", "custom_status", "ordering_key", "traceparent")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    RUN_AFTER_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    queue: str
    body: bytes
    priority: int
    run_after: _timestamp_pb2.Timestamp
    attempts_allowed: int
    idempotency_key: str
    custom_status: str
    ordering_key: str
    traceparent: str
    def __init__(self, queue: _Optional[str] = ..., body: _Optional[bytes] = ..., priority: _Optional[int] = ..., run_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempts_allowed: _Optional[int] = ..., idempotency_key: _Optional[str] = ..., custom_status: _Optional[str] = ..., ordering_key: _Optional[str] = ..., traceparent: _Optional[str] = ...) -> None: ...

class Job(_message.Message):
    __slots__ = ("job_id", "queue", "state", "priority", "body", "run_after", "attempts_allowed", "attempts_remaining", "custom_status", "created_at", "updated_at", "claim_expires_at", "finished_at", "ordering_key", "traceparent")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    RUN_AFTER_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_REMAINING_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    CLAIM_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    ORDERING_KEY_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    queue: str
    state: JobState
    priority: int
    body: bytes
    run_after: _timestamp_pb2.Timestamp
    attempts_allowed: int
    attempts_remaining: int
    custom_status: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    claim_expires_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    ordering_key: str
    traceparent: str
    def __init__(self, job_id: _Optional[str] = ..., queue: _Optional[str] = ..., state: _Optional[_Union[JobState, str]] = ..., priority: _Optional[int] = ..., body: _Optional[bytes] = ..., run_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempts_allowed: _Optional[int] = ..., attempts_remaining: _Optional[int] = ..., custom_status: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., claim_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ordering_key: _Optional[str] = ..., traceparent: _Optional[str] = ...) -> None: ...
