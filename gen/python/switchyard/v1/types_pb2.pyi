from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
TIER_DEVICE: Tier
TIER_DISK: Tier
TIER_HOST: Tier
TIER_UNSPECIFIED: Tier

class CandidateScore(_message.Message):
    __slots__ = ["active_requests", "cached_tokens", "cost", "decode_blocks", "ineligible_reason", "overlap", "prefill_tokens", "rank", "replica_id"]
    ACTIVE_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    DECODE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    INELIGIBLE_REASON_FIELD_NUMBER: _ClassVar[int]
    OVERLAP_FIELD_NUMBER: _ClassVar[int]
    PREFILL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    active_requests: int
    cached_tokens: int
    cost: float
    decode_blocks: float
    ineligible_reason: str
    overlap: TierOverlap
    prefill_tokens: int
    rank: int
    replica_id: str
    def __init__(self, replica_id: _Optional[str] = ..., overlap: _Optional[_Union[TierOverlap, _Mapping]] = ..., cached_tokens: _Optional[int] = ..., prefill_tokens: _Optional[int] = ..., decode_blocks: _Optional[float] = ..., active_requests: _Optional[int] = ..., cost: _Optional[float] = ..., rank: _Optional[int] = ..., ineligible_reason: _Optional[str] = ...) -> None: ...

class TierOverlap(_message.Message):
    __slots__ = ["device_blocks", "disk_blocks", "host_blocks", "predicted_blocks", "prefix_blocks"]
    DEVICE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    DISK_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    HOST_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    PREDICTED_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    PREFIX_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    device_blocks: int
    disk_blocks: int
    host_blocks: int
    predicted_blocks: int
    prefix_blocks: int
    def __init__(self, device_blocks: _Optional[int] = ..., prefix_blocks: _Optional[int] = ..., host_blocks: _Optional[int] = ..., disk_blocks: _Optional[int] = ..., predicted_blocks: _Optional[int] = ...) -> None: ...

class Tier(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
