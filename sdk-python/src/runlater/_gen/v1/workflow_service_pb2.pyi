import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FailurePolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAILURE_POLICY_UNSPECIFIED: _ClassVar[FailurePolicy]
    FAILURE_POLICY_ABORT: _ClassVar[FailurePolicy]
    FAILURE_POLICY_CONTINUE: _ClassVar[FailurePolicy]

class InstanceState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INSTANCE_STATE_UNSPECIFIED: _ClassVar[InstanceState]
    INSTANCE_STATE_RUNNING: _ClassVar[InstanceState]
    INSTANCE_STATE_SUCCEEDED: _ClassVar[InstanceState]
    INSTANCE_STATE_FAILED: _ClassVar[InstanceState]
    INSTANCE_STATE_ABORTED: _ClassVar[InstanceState]
    INSTANCE_STATE_CANCELLED: _ClassVar[InstanceState]

class InstanceJobState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INSTANCE_JOB_STATE_UNSPECIFIED: _ClassVar[InstanceJobState]
    INSTANCE_JOB_STATE_WAITING: _ClassVar[InstanceJobState]
    INSTANCE_JOB_STATE_RUNNABLE: _ClassVar[InstanceJobState]
    INSTANCE_JOB_STATE_RUNNING: _ClassVar[InstanceJobState]
    INSTANCE_JOB_STATE_DISABLED: _ClassVar[InstanceJobState]

class RunOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_OUTCOME_UNSPECIFIED: _ClassVar[RunOutcome]
    RUN_OUTCOME_QUEUED: _ClassVar[RunOutcome]
    RUN_OUTCOME_SUCCEEDED: _ClassVar[RunOutcome]
    RUN_OUTCOME_FAILED: _ClassVar[RunOutcome]
    RUN_OUTCOME_ABANDONED: _ClassVar[RunOutcome]
FAILURE_POLICY_UNSPECIFIED: FailurePolicy
FAILURE_POLICY_ABORT: FailurePolicy
FAILURE_POLICY_CONTINUE: FailurePolicy
INSTANCE_STATE_UNSPECIFIED: InstanceState
INSTANCE_STATE_RUNNING: InstanceState
INSTANCE_STATE_SUCCEEDED: InstanceState
INSTANCE_STATE_FAILED: InstanceState
INSTANCE_STATE_ABORTED: InstanceState
INSTANCE_STATE_CANCELLED: InstanceState
INSTANCE_JOB_STATE_UNSPECIFIED: InstanceJobState
INSTANCE_JOB_STATE_WAITING: InstanceJobState
INSTANCE_JOB_STATE_RUNNABLE: InstanceJobState
INSTANCE_JOB_STATE_RUNNING: InstanceJobState
INSTANCE_JOB_STATE_DISABLED: InstanceJobState
RUN_OUTCOME_UNSPECIFIED: RunOutcome
RUN_OUTCOME_QUEUED: RunOutcome
RUN_OUTCOME_SUCCEEDED: RunOutcome
RUN_OUTCOME_FAILED: RunOutcome
RUN_OUTCOME_ABANDONED: RunOutcome

class Workflow(_message.Message):
    __slots__ = ("name", "version", "jobs", "created_at")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    jobs: _containers.RepeatedCompositeFieldContainer[WorkflowJob]
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ..., jobs: _Optional[_Iterable[_Union[WorkflowJob, _Mapping]]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class WorkflowJob(_message.Message):
    __slots__ = ("name", "queue", "inputs", "on_failure", "body", "priority", "attempts_allowed")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    ON_FAILURE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_ALLOWED_FIELD_NUMBER: _ClassVar[int]
    name: str
    queue: str
    inputs: _containers.RepeatedCompositeFieldContainer[WorkflowInput]
    on_failure: FailurePolicy
    body: bytes
    priority: int
    attempts_allowed: int
    def __init__(self, name: _Optional[str] = ..., queue: _Optional[str] = ..., inputs: _Optional[_Iterable[_Union[WorkflowInput, _Mapping]]] = ..., on_failure: _Optional[_Union[FailurePolicy, str]] = ..., body: _Optional[bytes] = ..., priority: _Optional[int] = ..., attempts_allowed: _Optional[int] = ...) -> None: ...

class WorkflowInput(_message.Message):
    __slots__ = ("job", "external", "seed")
    JOB_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    job: str
    external: str
    seed: bool
    def __init__(self, job: _Optional[str] = ..., external: _Optional[str] = ..., seed: _Optional[bool] = ...) -> None: ...

class WorkflowEvent(_message.Message):
    __slots__ = ("event_id", "input", "from_job", "from_run", "custom_status", "result", "posted_at")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    FROM_JOB_FIELD_NUMBER: _ClassVar[int]
    FROM_RUN_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    POSTED_AT_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    input: str
    from_job: str
    from_run: int
    custom_status: str
    result: bytes
    posted_at: _timestamp_pb2.Timestamp
    def __init__(self, event_id: _Optional[str] = ..., input: _Optional[str] = ..., from_job: _Optional[str] = ..., from_run: _Optional[int] = ..., custom_status: _Optional[str] = ..., result: _Optional[bytes] = ..., posted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class JobRun(_message.Message):
    __slots__ = ("run", "job_id", "triggered_by", "outcome", "custom_status", "result", "queued_at", "ended_at", "trimmed")
    RUN_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    TRIGGERED_BY_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    QUEUED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    TRIMMED_FIELD_NUMBER: _ClassVar[int]
    run: int
    job_id: str
    triggered_by: _containers.RepeatedCompositeFieldContainer[WorkflowEvent]
    outcome: RunOutcome
    custom_status: str
    result: bytes
    queued_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    trimmed: bool
    def __init__(self, run: _Optional[int] = ..., job_id: _Optional[str] = ..., triggered_by: _Optional[_Iterable[_Union[WorkflowEvent, _Mapping]]] = ..., outcome: _Optional[_Union[RunOutcome, str]] = ..., custom_status: _Optional[str] = ..., result: _Optional[bytes] = ..., queued_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., trimmed: _Optional[bool] = ...) -> None: ...

class InstanceJob(_message.Message):
    __slots__ = ("name", "state", "pending_events", "runs", "run_count", "dropped_events")
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PENDING_EVENTS_FIELD_NUMBER: _ClassVar[int]
    RUNS_FIELD_NUMBER: _ClassVar[int]
    RUN_COUNT_FIELD_NUMBER: _ClassVar[int]
    DROPPED_EVENTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    state: InstanceJobState
    pending_events: _containers.RepeatedCompositeFieldContainer[WorkflowEvent]
    runs: _containers.RepeatedCompositeFieldContainer[JobRun]
    run_count: int
    dropped_events: int
    def __init__(self, name: _Optional[str] = ..., state: _Optional[_Union[InstanceJobState, str]] = ..., pending_events: _Optional[_Iterable[_Union[WorkflowEvent, _Mapping]]] = ..., runs: _Optional[_Iterable[_Union[JobRun, _Mapping]]] = ..., run_count: _Optional[int] = ..., dropped_events: _Optional[int] = ...) -> None: ...

class Instance(_message.Message):
    __slots__ = ("instance_id", "workflow", "version", "state", "keep_open", "created_at", "ended_at", "jobs")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    KEEP_OPEN_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ENDED_AT_FIELD_NUMBER: _ClassVar[int]
    JOBS_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    workflow: str
    version: int
    state: InstanceState
    keep_open: bool
    created_at: _timestamp_pb2.Timestamp
    ended_at: _timestamp_pb2.Timestamp
    jobs: _containers.RepeatedCompositeFieldContainer[InstanceJob]
    def __init__(self, instance_id: _Optional[str] = ..., workflow: _Optional[str] = ..., version: _Optional[int] = ..., state: _Optional[_Union[InstanceState, str]] = ..., keep_open: _Optional[bool] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ended_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., jobs: _Optional[_Iterable[_Union[InstanceJob, _Mapping]]] = ...) -> None: ...

class ExternalEvent(_message.Message):
    __slots__ = ("input", "custom_status", "result")
    INPUT_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    input: str
    custom_status: str
    result: bytes
    def __init__(self, input: _Optional[str] = ..., custom_status: _Optional[str] = ..., result: _Optional[bytes] = ...) -> None: ...

class ApplyWorkflowRequest(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: Workflow
    def __init__(self, workflow: _Optional[_Union[Workflow, _Mapping]] = ...) -> None: ...

class ApplyWorkflowResponse(_message.Message):
    __slots__ = ("workflow", "created")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    workflow: Workflow
    created: bool
    def __init__(self, workflow: _Optional[_Union[Workflow, _Mapping]] = ..., created: _Optional[bool] = ...) -> None: ...

class GetWorkflowRequest(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class GetWorkflowResponse(_message.Message):
    __slots__ = ("workflow",)
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    workflow: Workflow
    def __init__(self, workflow: _Optional[_Union[Workflow, _Mapping]] = ...) -> None: ...

class ListWorkflowsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListWorkflowsResponse(_message.Message):
    __slots__ = ("workflows",)
    WORKFLOWS_FIELD_NUMBER: _ClassVar[int]
    workflows: _containers.RepeatedCompositeFieldContainer[Workflow]
    def __init__(self, workflows: _Optional[_Iterable[_Union[Workflow, _Mapping]]] = ...) -> None: ...

class StartInstanceRequest(_message.Message):
    __slots__ = ("workflow", "events", "keep_open")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    KEEP_OPEN_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    events: _containers.RepeatedCompositeFieldContainer[ExternalEvent]
    keep_open: bool
    def __init__(self, workflow: _Optional[str] = ..., events: _Optional[_Iterable[_Union[ExternalEvent, _Mapping]]] = ..., keep_open: _Optional[bool] = ...) -> None: ...

class StartInstanceResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class GetInstanceRequest(_message.Message):
    __slots__ = ("instance_id",)
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    def __init__(self, instance_id: _Optional[str] = ...) -> None: ...

class GetInstanceResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class ListInstancesRequest(_message.Message):
    __slots__ = ("workflow", "state", "limit", "page_token")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    state: InstanceState
    limit: int
    page_token: str
    def __init__(self, workflow: _Optional[str] = ..., state: _Optional[_Union[InstanceState, str]] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListInstancesResponse(_message.Message):
    __slots__ = ("instances", "next_page_token")
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    instances: _containers.RepeatedCompositeFieldContainer[Instance]
    next_page_token: str
    def __init__(self, instances: _Optional[_Iterable[_Union[Instance, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class CancelInstanceRequest(_message.Message):
    __slots__ = ("instance_id",)
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    def __init__(self, instance_id: _Optional[str] = ...) -> None: ...

class CancelInstanceResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class CloseInstanceRequest(_message.Message):
    __slots__ = ("instance_id",)
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    def __init__(self, instance_id: _Optional[str] = ...) -> None: ...

class CloseInstanceResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class PostEventRequest(_message.Message):
    __slots__ = ("instance_id", "event")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    event: ExternalEvent
    def __init__(self, instance_id: _Optional[str] = ..., event: _Optional[_Union[ExternalEvent, _Mapping]] = ...) -> None: ...

class PostEventResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class RerunJobRequest(_message.Message):
    __slots__ = ("instance_id", "job", "run")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    job: str
    run: int
    def __init__(self, instance_id: _Optional[str] = ..., job: _Optional[str] = ..., run: _Optional[int] = ...) -> None: ...

class RerunJobResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class DisableJobRequest(_message.Message):
    __slots__ = ("instance_id", "job")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    job: str
    def __init__(self, instance_id: _Optional[str] = ..., job: _Optional[str] = ...) -> None: ...

class DisableJobResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class EnableJobRequest(_message.Message):
    __slots__ = ("instance_id", "job")
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    instance_id: str
    job: str
    def __init__(self, instance_id: _Optional[str] = ..., job: _Optional[str] = ...) -> None: ...

class EnableJobResponse(_message.Message):
    __slots__ = ("instance",)
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    instance: Instance
    def __init__(self, instance: _Optional[_Union[Instance, _Mapping]] = ...) -> None: ...

class WorkflowContext(_message.Message):
    __slots__ = ("workflow", "version", "instance_id", "job", "run", "triggered_by")
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    TRIGGERED_BY_FIELD_NUMBER: _ClassVar[int]
    workflow: str
    version: int
    instance_id: str
    job: str
    run: int
    triggered_by: _containers.RepeatedCompositeFieldContainer[WorkflowEvent]
    def __init__(self, workflow: _Optional[str] = ..., version: _Optional[int] = ..., instance_id: _Optional[str] = ..., job: _Optional[str] = ..., run: _Optional[int] = ..., triggered_by: _Optional[_Iterable[_Union[WorkflowEvent, _Mapping]]] = ...) -> None: ...
