import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetClusterInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetClusterInfoResponse(_message.Message):
    __slots__ = ("node_role", "node_broker_id", "brokers", "now")
    NODE_ROLE_FIELD_NUMBER: _ClassVar[int]
    NODE_BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    BROKERS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    node_role: str
    node_broker_id: str
    brokers: _containers.RepeatedCompositeFieldContainer[BrokerInfo]
    now: _timestamp_pb2.Timestamp
    def __init__(self, node_role: _Optional[str] = ..., node_broker_id: _Optional[str] = ..., brokers: _Optional[_Iterable[_Union[BrokerInfo, _Mapping]]] = ..., now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class BrokerInfo(_message.Message):
    __slots__ = ("broker_id", "url", "registration_expires_at", "leader", "partitions")
    BROKER_ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    REGISTRATION_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    PARTITIONS_FIELD_NUMBER: _ClassVar[int]
    broker_id: str
    url: str
    registration_expires_at: _timestamp_pb2.Timestamp
    leader: bool
    partitions: _containers.RepeatedCompositeFieldContainer[PartitionInfo]
    def __init__(self, broker_id: _Optional[str] = ..., url: _Optional[str] = ..., registration_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., leader: _Optional[bool] = ..., partitions: _Optional[_Iterable[_Union[PartitionInfo, _Mapping]]] = ...) -> None: ...

class PartitionInfo(_message.Message):
    __slots__ = ("queue", "partition", "lease_epoch", "lease_expires_at")
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    PARTITION_FIELD_NUMBER: _ClassVar[int]
    LEASE_EPOCH_FIELD_NUMBER: _ClassVar[int]
    LEASE_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    queue: str
    partition: int
    lease_epoch: int
    lease_expires_at: _timestamp_pb2.Timestamp
    def __init__(self, queue: _Optional[str] = ..., partition: _Optional[int] = ..., lease_epoch: _Optional[int] = ..., lease_expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
