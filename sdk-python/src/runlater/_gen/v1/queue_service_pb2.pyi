import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RetryPolicy(_message.Message):
    __slots__ = ("initial_delay", "linear_steps", "max_delay")
    INITIAL_DELAY_FIELD_NUMBER: _ClassVar[int]
    LINEAR_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_DELAY_FIELD_NUMBER: _ClassVar[int]
    initial_delay: _duration_pb2.Duration
    linear_steps: int
    max_delay: _duration_pb2.Duration
    def __init__(self, initial_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., linear_steps: _Optional[int] = ..., max_delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class QueueConfig(_message.Message):
    __slots__ = ("priorities", "claim_timeout", "retry_policy", "default_attempts_allowed", "max_dequeue_per_second", "paused", "succeeded_retention", "failed_retention", "fifo", "partitions", "max_body_bytes")
    PRIORITIES_FIELD_NUMBER: _ClassVar[int]
    CLAIM_TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    RETRY_POLICY_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    MAX_DEQUEUE_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_RETENTION_FIELD_NUMBER: _ClassVar[int]
    FAILED_RETENTION_FIELD_NUMBER: _ClassVar[int]
    FIFO_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_BODY_BYTES_FIELD_NUMBER: _ClassVar[int]
    priorities: int
    claim_timeout: _duration_pb2.Duration
    retry_policy: RetryPolicy
    default_attempts_allowed: int
    max_dequeue_per_second: float
    paused: bool
    succeeded_retention: _duration_pb2.Duration
    failed_retention: _duration_pb2.Duration
    fifo: bool
    partitions: int
    max_body_bytes: int
    def __init__(self, priorities: _Optional[int] = ..., claim_timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., retry_policy: _Optional[_Union[RetryPolicy, _Mapping]] = ..., default_attempts_allowed: _Optional[int] = ..., max_dequeue_per_second: _Optional[float] = ..., paused: _Optional[bool] = ..., succeeded_retention: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., failed_retention: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., fifo: _Optional[bool] = ..., partitions: _Optional[int] = ..., max_body_bytes: _Optional[int] = ...) -> None: ...

class QueueStats(_message.Message):
    __slots__ = ("pending", "scheduled", "running", "succeeded", "failed", "oldest_pending_age", "counters")
    PENDING_FIELD_NUMBER: _ClassVar[int]
    SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    OLDEST_PENDING_AGE_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    pending: int
    scheduled: int
    running: int
    succeeded: int
    failed: int
    oldest_pending_age: _duration_pb2.Duration
    counters: QueueCounters
    def __init__(self, pending: _Optional[int] = ..., scheduled: _Optional[int] = ..., running: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., oldest_pending_age: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., counters: _Optional[_Union[QueueCounters, _Mapping]] = ...) -> None: ...

class QueueCounters(_message.Message):
    __slots__ = ("enqueued", "succeeded", "failed", "counting_since")
    ENQUEUED_FIELD_NUMBER: _ClassVar[int]
    SUCCEEDED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    COUNTING_SINCE_FIELD_NUMBER: _ClassVar[int]
    enqueued: int
    succeeded: int
    failed: int
    counting_since: _timestamp_pb2.Timestamp
    def __init__(self, enqueued: _Optional[int] = ..., succeeded: _Optional[int] = ..., failed: _Optional[int] = ..., counting_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Queue(_message.Message):
    __slots__ = ("name", "config", "stats")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    name: str
    config: QueueConfig
    stats: QueueStats
    def __init__(self, name: _Optional[str] = ..., config: _Optional[_Union[QueueConfig, _Mapping]] = ..., stats: _Optional[_Union[QueueStats, _Mapping]] = ...) -> None: ...

class CreateQueueRequest(_message.Message):
    __slots__ = ("name", "config")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    name: str
    config: QueueConfig
    def __init__(self, name: _Optional[str] = ..., config: _Optional[_Union[QueueConfig, _Mapping]] = ...) -> None: ...

class CreateQueueResponse(_message.Message):
    __slots__ = ("queue", "created")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    queue: Queue
    created: bool
    def __init__(self, queue: _Optional[_Union[Queue, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class UpdateQueueRequest(_message.Message):
    __slots__ = ("name", "config", "update_mask")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    name: str
    config: QueueConfig
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, name: _Optional[str] = ..., config: _Optional[_Union[QueueConfig, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateQueueResponse(_message.Message):
    __slots__ = ("queue",)
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: Queue
    def __init__(self, queue: _Optional[_Union[Queue, _Mapping]] = ...) -> None: ...

class DeleteQueueRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteQueueResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class ListQueuesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListQueuesResponse(_message.Message):
    __slots__ = ("queues",)
    QUEUES_FIELD_NUMBER: _ClassVar[int]
    queues: _containers.RepeatedCompositeFieldContainer[Queue]
    def __init__(self, queues: _Optional[_Iterable[_Union[Queue, _Mapping]]] = ...) -> None: ...

class GetQueueRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetQueueResponse(_message.Message):
    __slots__ = ("queue",)
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    queue: Queue
    def __init__(self, queue: _Optional[_Union[Queue, _Mapping]] = ...) -> None: ...
