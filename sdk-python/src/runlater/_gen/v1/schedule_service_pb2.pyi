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

class OverlapPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OVERLAP_POLICY_UNSPECIFIED: _ClassVar[OverlapPolicy]
    OVERLAP_POLICY_SKIP: _ClassVar[OverlapPolicy]
    OVERLAP_POLICY_ALLOW: _ClassVar[OverlapPolicy]
    OVERLAP_POLICY_CANCEL_PREVIOUS: _ClassVar[OverlapPolicy]

class CatchUp(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CATCH_UP_UNSPECIFIED: _ClassVar[CatchUp]
    CATCH_UP_NONE: _ClassVar[CatchUp]
    CATCH_UP_LATEST: _ClassVar[CatchUp]

class FireOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FIRE_OUTCOME_UNSPECIFIED: _ClassVar[FireOutcome]
    FIRE_OUTCOME_STARTED: _ClassVar[FireOutcome]
    FIRE_OUTCOME_SKIPPED: _ClassVar[FireOutcome]
    FIRE_OUTCOME_MISSED: _ClassVar[FireOutcome]
    FIRE_OUTCOME_FAILED: _ClassVar[FireOutcome]
OVERLAP_POLICY_UNSPECIFIED: OverlapPolicy
OVERLAP_POLICY_SKIP: OverlapPolicy
OVERLAP_POLICY_ALLOW: OverlapPolicy
OVERLAP_POLICY_CANCEL_PREVIOUS: OverlapPolicy
CATCH_UP_UNSPECIFIED: CatchUp
CATCH_UP_NONE: CatchUp
CATCH_UP_LATEST: CatchUp
FIRE_OUTCOME_UNSPECIFIED: FireOutcome
FIRE_OUTCOME_STARTED: FireOutcome
FIRE_OUTCOME_SKIPPED: FireOutcome
FIRE_OUTCOME_MISSED: FireOutcome
FIRE_OUTCOME_FAILED: FireOutcome

class Schedule(_message.Message):
    __slots__ = ("name", "cron", "time_zone", "workflow", "job", "overlap", "catch_up", "catch_up_window", "paused", "next_fire_at", "upcoming", "last_started", "fires", "history", "created_at", "updated_at")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CRON_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_FIELD_NUMBER: _ClassVar[int]
    CATCH_UP_FIELD_NUMBER: _ClassVar[int]
    CATCH_UP_WINDOW_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIRE_AT_FIELD_NUMBER: _ClassVar[int]
    UPCOMING_FIELD_NUMBER: _ClassVar[int]
    LAST_STARTED_FIELD_NUMBER: _ClassVar[int]
    FIRES_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    name: str
    cron: str
    time_zone: str
    workflow: ScheduleWorkflowTarget
    job: ScheduleJobTarget
    overlap: OverlapPolicy
    catch_up: CatchUp
    catch_up_window: _duration_pb2.Duration
    paused: bool
    next_fire_at: _timestamp_pb2.Timestamp
    upcoming: _containers.RepeatedCompositeFieldContainer[_timestamp_pb2.Timestamp]
    last_started: str
    fires: int
    history: _containers.RepeatedCompositeFieldContainer[ScheduleFire]
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., cron: _Optional[str] = ..., time_zone: _Optional[str] = ..., workflow: _Optional[_Union[ScheduleWorkflowTarget, _Mapping]] = ..., job: _Optional[_Union[ScheduleJobTarget, _Mapping]] = ..., overlap: _Optional[_Union[OverlapPolicy, str]] = ..., catch_up: _Optional[_Union[CatchUp, str]] = ..., catch_up_window: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., paused: _Optional[bool] = ..., next_fire_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., upcoming: _Optional[_Iterable[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]]] = ..., last_started: _Optional[str] = ..., fires: _Optional[int] = ..., history: _Optional[_Iterable[_Union[ScheduleFire, _Mapping]]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ScheduleWorkflowTarget(_message.Message):
    __slots__ = ("workflow", "events", "keep_open")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    KEEP_OPEN_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    events: _containers.RepeatedCompositeFieldContainer[_workflow_service_pb2.ExternalEvent]
    keep_open: bool
    def __init__(self, workflow: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_workflow_service_pb2.ExternalEvent, _Mapping]]] = ..., keep_open: _Optional[bool] = ...) -> None: ...

class ScheduleJobTarget(_message.Message):
    __slots__ = ("queue", "body", "priority", "attempts_allowed")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    queue: str
    body: bytes
    priority: int
    attempts_allowed: int
    def __init__(self, queue: _Optional[str] = ..., body: _Optional[bytes] = ..., priority: _Optional[int] = ..., attempts_allowed: _Optional[int] = ...) -> None: ...

class ScheduleFire(_message.Message):
    __slots__ = ("outcome", "at", "through", "fired_at", "started", "previous", "error")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    THROUGH_FIELD_NUMBER: _ClassVar[int]
    FIRED_AT_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    outcome: FireOutcome
    at: _timestamp_pb2.Timestamp
    through: _timestamp_pb2.Timestamp
    fired_at: _timestamp_pb2.Timestamp
    started: str
    previous: str
    error: str
    def __init__(self, outcome: _Optional[_Union[FireOutcome, str]] = ..., at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., through: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., fired_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., started: _Optional[str] = ..., previous: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class CreateScheduleRequest(_message.Message):
    __slots__ = ("schedule", "paused")
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    paused: bool
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ..., paused: _Optional[bool] = ...) -> None: ...

class CreateScheduleResponse(_message.Message):
    __slots__ = ("schedule", "created")
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    created: bool
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class UpdateScheduleRequest(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class UpdateScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class DeleteScheduleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteScheduleResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class GetScheduleRequest(_message.Message):
    __slots__ = ("name", "upcoming")
    NAME_FIELD_NUMBER: _ClassVar[int]
    UPCOMING_FIELD_NUMBER: _ClassVar[int]
    name: str
    upcoming: int
    def __init__(self, name: _Optional[str] = ..., upcoming: _Optional[int] = ...) -> None: ...

class GetScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class ListSchedulesRequest(_message.Message):
    __slots__ = ("limit", "page_token")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    limit: int
    page_token: str
    def __init__(self, limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSchedulesResponse(_message.Message):
    __slots__ = ("schedules", "next_page_token")
    SCHEDULES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    schedules: _containers.RepeatedCompositeFieldContainer[Schedule]
    next_page_token: str
    def __init__(self, schedules: _Optional[_Iterable[_Union[Schedule, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PauseScheduleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class PauseScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...

class ResumeScheduleRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ResumeScheduleResponse(_message.Message):
    __slots__ = ("schedule",)
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    schedule: Schedule
    def __init__(self, schedule: _Optional[_Union[Schedule, _Mapping]] = ...) -> None: ...
