from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
REPLICA_HEALTH_HEALTHY: ReplicaHealth
REPLICA_HEALTH_UNHEALTHY: ReplicaHealth
REPLICA_HEALTH_UNSPECIFIED: ReplicaHealth
REPLICA_STATE_DRAINING: ReplicaState
REPLICA_STATE_READY: ReplicaState
REPLICA_STATE_UNSPECIFIED: ReplicaState

class DeregisterReplicaRequest(_message.Message):
    __slots__ = ["replica_id"]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    replica_id: str
    def __init__(self, replica_id: _Optional[str] = ...) -> None: ...

class DeregisterReplicaResponse(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class HeartbeatRequest(_message.Message):
    __slots__ = ["replica_id"]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    replica_id: str
    def __init__(self, replica_id: _Optional[str] = ...) -> None: ...

class HeartbeatResponse(_message.Message):
    __slots__ = ["status"]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: ReplicaStatus
    def __init__(self, status: _Optional[_Union[ReplicaStatus, _Mapping]] = ...) -> None: ...

class KVEventSource(_message.Message):
    __slots__ = ["bind", "data_parallel_size", "endpoint", "replay_endpoint", "topic"]
    BIND_FIELD_NUMBER: _ClassVar[int]
    DATA_PARALLEL_SIZE_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    REPLAY_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    bind: bool
    data_parallel_size: int
    endpoint: str
    replay_endpoint: str
    topic: str
    def __init__(self, endpoint: _Optional[str] = ..., replay_endpoint: _Optional[str] = ..., topic: _Optional[str] = ..., bind: bool = ..., data_parallel_size: _Optional[int] = ...) -> None: ...

class ListReplicasRequest(_message.Message):
    __slots__ = ["model"]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    model: str
    def __init__(self, model: _Optional[str] = ...) -> None: ...

class ListReplicasResponse(_message.Message):
    __slots__ = ["replicas"]
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    replicas: _containers.RepeatedCompositeFieldContainer[ReplicaStatus]
    def __init__(self, replicas: _Optional[_Iterable[_Union[ReplicaStatus, _Mapping]]] = ...) -> None: ...

class RegisterReplicaRequest(_message.Message):
    __slots__ = ["replica"]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    replica: Replica
    def __init__(self, replica: _Optional[_Union[Replica, _Mapping]] = ...) -> None: ...

class RegisterReplicaResponse(_message.Message):
    __slots__ = ["status"]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: ReplicaStatus
    def __init__(self, status: _Optional[_Union[ReplicaStatus, _Mapping]] = ...) -> None: ...

class Replica(_message.Message):
    __slots__ = ["address", "capacity", "health_url", "id", "kv_events", "labels", "model", "state"]
    class LabelsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    HEALTH_URL_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    KV_EVENTS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    address: str
    capacity: ReplicaCapacity
    health_url: str
    id: str
    kv_events: KVEventSource
    labels: _containers.ScalarMap[str, str]
    model: str
    state: ReplicaState
    def __init__(self, id: _Optional[str] = ..., model: _Optional[str] = ..., address: _Optional[str] = ..., capacity: _Optional[_Union[ReplicaCapacity, _Mapping]] = ..., labels: _Optional[_Mapping[str, str]] = ..., state: _Optional[_Union[ReplicaState, str]] = ..., kv_events: _Optional[_Union[KVEventSource, _Mapping]] = ..., health_url: _Optional[str] = ...) -> None: ...

class ReplicaCache(_message.Message):
    __slots__ = ["device_blocks", "disk_blocks", "host_blocks"]
    DEVICE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    DISK_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    HOST_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    device_blocks: int
    disk_blocks: int
    host_blocks: int
    def __init__(self, device_blocks: _Optional[int] = ..., host_blocks: _Optional[int] = ..., disk_blocks: _Optional[int] = ...) -> None: ...

class ReplicaCapacity(_message.Message):
    __slots__ = ["kv_blocks", "max_batched_tokens"]
    KV_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    MAX_BATCHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    kv_blocks: int
    max_batched_tokens: int
    def __init__(self, kv_blocks: _Optional[int] = ..., max_batched_tokens: _Optional[int] = ...) -> None: ...

class ReplicaLoad(_message.Message):
    __slots__ = ["active_requests", "decode_blocks", "prefill_tokens"]
    ACTIVE_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    DECODE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    PREFILL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    active_requests: int
    decode_blocks: int
    prefill_tokens: int
    def __init__(self, prefill_tokens: _Optional[int] = ..., decode_blocks: _Optional[int] = ..., active_requests: _Optional[int] = ...) -> None: ...

class ReplicaStatus(_message.Message):
    __slots__ = ["cache", "health", "health_detail", "load", "replica"]
    CACHE_FIELD_NUMBER: _ClassVar[int]
    HEALTH_DETAIL_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    LOAD_FIELD_NUMBER: _ClassVar[int]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    cache: ReplicaCache
    health: ReplicaHealth
    health_detail: str
    load: ReplicaLoad
    replica: Replica
    def __init__(self, replica: _Optional[_Union[Replica, _Mapping]] = ..., load: _Optional[_Union[ReplicaLoad, _Mapping]] = ..., cache: _Optional[_Union[ReplicaCache, _Mapping]] = ..., health: _Optional[_Union[ReplicaHealth, str]] = ..., health_detail: _Optional[str] = ...) -> None: ...

class SetReplicaStateRequest(_message.Message):
    __slots__ = ["replica_id", "state"]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    replica_id: str
    state: ReplicaState
    def __init__(self, replica_id: _Optional[str] = ..., state: _Optional[_Union[ReplicaState, str]] = ...) -> None: ...

class SetReplicaStateResponse(_message.Message):
    __slots__ = ["status"]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: ReplicaStatus
    def __init__(self, status: _Optional[_Union[ReplicaStatus, _Mapping]] = ...) -> None: ...

class ReplicaState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ReplicaHealth(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
