from switchyard.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AllBlocksCleared(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class BlockRemoved(_message.Message):
    __slots__ = ["block_hashes", "tier"]
    BLOCK_HASHES_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    block_hashes: _containers.RepeatedScalarFieldContainer[int]
    tier: _types_pb2.Tier
    def __init__(self, block_hashes: _Optional[_Iterable[int]] = ..., tier: _Optional[_Union[_types_pb2.Tier, str]] = ...) -> None: ...

class BlockStored(_message.Message):
    __slots__ = ["block_hashes", "block_size", "lora_name", "parent_block_hash", "tier", "token_ids"]
    BLOCK_HASHES_FIELD_NUMBER: _ClassVar[int]
    BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    LORA_NAME_FIELD_NUMBER: _ClassVar[int]
    PARENT_BLOCK_HASH_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    TOKEN_IDS_FIELD_NUMBER: _ClassVar[int]
    block_hashes: _containers.RepeatedScalarFieldContainer[int]
    block_size: int
    lora_name: str
    parent_block_hash: int
    tier: _types_pb2.Tier
    token_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, block_hashes: _Optional[_Iterable[int]] = ..., parent_block_hash: _Optional[int] = ..., token_ids: _Optional[_Iterable[int]] = ..., block_size: _Optional[int] = ..., lora_name: _Optional[str] = ..., tier: _Optional[_Union[_types_pb2.Tier, str]] = ...) -> None: ...

class KVEvent(_message.Message):
    __slots__ = ["cleared", "removed", "stored"]
    CLEARED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    STORED_FIELD_NUMBER: _ClassVar[int]
    cleared: AllBlocksCleared
    removed: BlockRemoved
    stored: BlockStored
    def __init__(self, stored: _Optional[_Union[BlockStored, _Mapping]] = ..., removed: _Optional[_Union[BlockRemoved, _Mapping]] = ..., cleared: _Optional[_Union[AllBlocksCleared, _Mapping]] = ...) -> None: ...

class PublishKVEventsRequest(_message.Message):
    __slots__ = ["data_parallel_rank", "events", "replica_id", "sequence"]
    DATA_PARALLEL_RANK_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    data_parallel_rank: int
    events: _containers.RepeatedCompositeFieldContainer[KVEvent]
    replica_id: str
    sequence: int
    def __init__(self, replica_id: _Optional[str] = ..., data_parallel_rank: _Optional[int] = ..., sequence: _Optional[int] = ..., events: _Optional[_Iterable[_Union[KVEvent, _Mapping]]] = ...) -> None: ...

class PublishKVEventsResponse(_message.Message):
    __slots__ = ["batches", "events_applied", "events_rejected", "gaps", "last_sequence", "rejected_by_reason", "restarts"]
    class RejectedByReasonEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_APPLIED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_REJECTED_FIELD_NUMBER: _ClassVar[int]
    GAPS_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    REJECTED_BY_REASON_FIELD_NUMBER: _ClassVar[int]
    RESTARTS_FIELD_NUMBER: _ClassVar[int]
    batches: int
    events_applied: int
    events_rejected: int
    gaps: int
    last_sequence: int
    rejected_by_reason: _containers.ScalarMap[str, int]
    restarts: int
    def __init__(self, batches: _Optional[int] = ..., events_applied: _Optional[int] = ..., events_rejected: _Optional[int] = ..., rejected_by_reason: _Optional[_Mapping[str, int]] = ..., gaps: _Optional[int] = ..., restarts: _Optional[int] = ..., last_sequence: _Optional[int] = ...) -> None: ...
