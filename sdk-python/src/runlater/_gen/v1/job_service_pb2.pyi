import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from runlater._gen.v1 import job_pb2 as _job_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EnqueueRequest(_message.Message):
    __slots__ = ("jobs",)
    JOBS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_job_pb2.JobSpec]
    def __init__(self, jobs: _Optional[_Iterable[_Union[_job_pb2.JobSpec, _Mapping]]] = ...) -> None: ...

class EnqueueResponse(_message.Message):
    __slots__ = ("job_ids",)
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetJobsRequest(_message.Message):
    __slots__ = ("job_ids", "include_body")
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_BODY_FIELD_NUMBER: _ClassVar[int]
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    include_body: bool
    def __init__(self, job_ids: _Optional[_Iterable[str]] = ..., include_body: _Optional[bool] = ...) -> None: ...

class GetJobsResponse(_message.Message):
    __slots__ = ("jobs", "not_found_job_ids")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NOT_FOUND_JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_job_pb2.Job]
    not_found_job_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, jobs: _Optional[_Iterable[_Union[_job_pb2.Job, _Mapping]]] = ..., not_found_job_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ScanJobsRequest(_message.Message):
    __slots__ = ("queue", "state", "priority", "future", "body_regex", "limit", "page_token", "include_body")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    FUTURE_FIELD_NUMBER: _ClassVar[int]
    BODY_REGEX_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_BODY_FIELD_NUMBER: _ClassVar[int]
    queue: str
    state: _job_pb2.JobState
    priority: int
    future: bool
    body_regex: str
    limit: int
    page_token: str
    include_body: bool
    def __init__(self, queue: _Optional[str] = ..., state: _Optional[_Union[_job_pb2.JobState, str]] = ..., priority: _Optional[int] = ..., future: _Optional[bool] = ..., body_regex: _Optional[str] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ..., include_body: _Optional[bool] = ...) -> None: ...

class ScanJobsResponse(_message.Message):
    __slots__ = ("jobs", "next_page_token")
    JOBS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    jobs: _containers.RepeatedCompositeFieldContainer[_job_pb2.Job]
    next_page_token: str
    def __init__(self, jobs: _Optional[_Iterable[_Union[_job_pb2.Job, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CountJobsRequest(_message.Message):
    __slots__ = ("queue", "state", "priority", "future", "body_regex")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    FUTURE_FIELD_NUMBER: _ClassVar[int]
    BODY_REGEX_FIELD_NUMBER: _ClassVar[int]
    queue: str
    state: _job_pb2.JobState
    priority: int
    future: bool
    body_regex: str
    def __init__(self, queue: _Optional[str] = ..., state: _Optional[_Union[_job_pb2.JobState, str]] = ..., priority: _Optional[int] = ..., future: _Optional[bool] = ..., body_regex: _Optional[str] = ...) -> None: ...

class CountJobsResponse(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...

class RetryFailedJobsRequest(_message.Message):
    __slots__ = ("queue", "priority", "attempts_allowed", "run_after", "limit")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    RUN_AFTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    queue: str
    priority: int
    attempts_allowed: int
    run_after: _timestamp_pb2.Timestamp
    limit: int
    def __init__(self, queue: _Optional[str] = ..., priority: _Optional[int] = ..., attempts_allowed: _Optional[int] = ..., run_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class RetryFailedJobsResponse(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...

class DeleteJobsRequest(_message.Message):
    __slots__ = ("queue", "state", "priority", "body_regex", "limit")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    BODY_REGEX_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    queue: str
    state: _job_pb2.JobState
    priority: int
    body_regex: str
    limit: int
    def __init__(self, queue: _Optional[str] = ..., state: _Optional[_Union[_job_pb2.JobState, str]] = ..., priority: _Optional[int] = ..., body_regex: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class DeleteJobsResponse(_message.Message):
    __slots__ = ("count",)
    COUNT_FIELD_NUMBER: _ClassVar[int]
    count: int
    def __init__(self, count: _Optional[int] = ...) -> None: ...
