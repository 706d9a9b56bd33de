import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from runlater._gen.v1 import workflow_service_pb2 as _workflow_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_ACKNOWLEDGED: _ClassVar[Outcome]
    OUTCOME_STALE_CLAIM: _ClassVar[Outcome]
    OUTCOME_NOT_FOUND: _ClassVar[Outcome]
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_ACKNOWLEDGED: Outcome
OUTCOME_STALE_CLAIM: Outcome
OUTCOME_NOT_FOUND: Outcome

class DequeueRequest(_message.Message):
    __slots__ = ("queue", "limit", "wait", "worker_id", "ack", "dry_run")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    queue: str
    limit: int
    wait: _duration_pb2.Duration
    worker_id: str
    ack: AckRequest
    dry_run: bool
    def __init__(self, queue: _Optional[str] = ..., limit: _Optional[int] = ..., wait: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., worker_id: _Optional[str] = ..., ack: _Optional[_Union[AckRequest, _Mapping]] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class DequeueResponse(_message.Message):
    __slots__ = ("jobs", "ack")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[DequeuedJob]
    ack: AckResponse
    def __init__(self, jobs: _Optional[_Iterable[_Union[DequeuedJob, _Mapping]]] = ..., ack: _Optional[_Union[AckResponse, _Mapping]] = ...) -> None: ...

class DequeueStreamRequest(_message.Message):
    __slots__ = ("queue", "worker_id", "credit", "ack")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    CREDIT_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    queue: str
    worker_id: str
    credit: int
    ack: AckRequest
    def __init__(self, queue: _Optional[str] = ..., worker_id: _Optional[str] = ..., credit: _Optional[int] = ..., ack: _Optional[_Union[AckRequest, _Mapping]] = ...) -> None: ...

class DequeueStreamResponse(_message.Message):
    __slots__ = ("jobs", "ack")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[DequeuedJob]
    ack: AckResponse
    def __init__(self, jobs: _Optional[_Iterable[_Union[DequeuedJob, _Mapping]]] = ..., ack: _Optional[_Union[AckResponse, _Mapping]] = ...) -> None: ...

class DequeuedJob(_message.Message):
    __slots__ = ("job_id", "body", "priority", "attempt", "attempts_allowed", "claim_token", "claim_expires_at", "created_at", "custom_status", "workflow", "traceparent")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLAIM_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    TRACEPARENT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    body: bytes
    priority: int
    attempt: int
    attempts_allowed: int
    claim_token: str
    claim_expires_at: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    custom_status: str
    workflow: _workflow_service_pb2.WorkflowContext
    traceparent: str
    def __init__(self, job_id: _Optional[str] = ..., body: _Optional[bytes] = ..., priority: _Optional[int] = ..., attempt: _Optional[int] = ..., attempts_allowed: _Optional[int] = ..., claim_token: _Optional[str] = ..., claim_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., custom_status: _Optional[str] = ..., workflow: _Optional[_Union[_workflow_service_pb2.WorkflowContext, _Mapping]] = ..., traceparent: _Optional[str] = ...) -> None: ...

class AckRequest(_message.Message):
    __slots__ = ("queue", "succeeded", "failed")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    queue: str
    succeeded: _containers.RepeatedCompositeFieldContainer[JobSuccess]
    failed: _containers.RepeatedCompositeFieldContainer[JobFailure]
    def __init__(self, queue: _Optional[str] = ..., succeeded: _Optional[_Iterable[_Union[JobSuccess, _Mapping]]] = ..., failed: _Optional[_Iterable[_Union[JobFailure, _Mapping]]] = ...) -> None: ...

class JobSuccess(_message.Message):
    __slots__ = ("job_id", "claim_token", "custom_status", "result", "no_events")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    NO_EVENTS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    claim_token: str
    custom_status: str
    result: bytes
    no_events: bool
    def __init__(self, job_id: _Optional[str] = ..., claim_token: _Optional[str] = ..., custom_status: _Optional[str] = ..., result: _Optional[bytes] = ..., no_events: _Optional[bool] = ...) -> None: ...

class JobFailure(_message.Message):
    __slots__ = ("job_id", "claim_token", "custom_status", "retry_delay", "no_retry")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    RETRY_DELAY_FIELD_NUMBER: _ClassVar[int]
    NO_RETRY_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    claim_token: str
    custom_status: str
    retry_delay: _duration_pb2.Duration
    no_retry: bool
    def __init__(self, job_id: _Optional[str] = ..., claim_token: _Optional[str] = ..., custom_status: _Optional[str] = ..., retry_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., no_retry: _Optional[bool] = ...) -> None: ...

class JobOutcome(_message.Message):
    __slots__ = ("job_id", "outcome", "claim_expires_at")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CLAIM_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    outcome: Outcome
    claim_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, job_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., claim_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AckResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[JobOutcome]
    def __init__(self, results: _Optional[_Iterable[_Union[JobOutcome, _Mapping]]] = ...) -> None: ...

class CheckpointRequest(_message.Message):
    __slots__ = ("queue", "checkpoints")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    queue: str
    checkpoints: _containers.RepeatedCompositeFieldContainer[JobCheckpoint]
    def __init__(self, queue: _Optional[str] = ..., checkpoints: _Optional[_Iterable[_Union[JobCheckpoint, _Mapping]]] = ...) -> None: ...

class JobCheckpoint(_message.Message):
    __slots__ = ("job_id", "claim_token", "extend_claim_by", "new_body", "move_to_pending", "run_after", "attempts_allowed", "custom_status")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EXTEND_CLAIM_BY_FIELD_NUMBER: _ClassVar[int]
    NEW_BODY_FIELD_NUMBER: _ClassVar[int]
    MOVE_TO_PENDING_FIELD_NUMBER: _ClassVar[int]
    RUN_AFTER_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    claim_token: str
    extend_claim_by: _duration_pb2.Duration
    new_body: bytes
    move_to_pending: bool
    run_after: _timestamp_pb2.Timestamp
    attempts_allowed: int
    custom_status: str
    def __init__(self, job_id: _Optional[str] = ..., claim_token: _Optional[str] = ..., extend_claim_by: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., new_body: _Optional[bytes] = ..., move_to_pending: _Optional[bool] = ..., run_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attempts_allowed: _Optional[int] = ..., custom_status: _Optional[str] = ...) -> None: ...

class CheckpointResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[JobOutcome]
    def __init__(self, results: _Optional[_Iterable[_Union[JobOutcome, _Mapping]]] = ...) -> None: ...
