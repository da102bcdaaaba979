from google.protobuf import timestamp_pb2 as _timestamp_pb2
from switchyard.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

COMPLETION_STATUS_CANCELLED: CompletionStatus
COMPLETION_STATUS_ERROR: CompletionStatus
COMPLETION_STATUS_OK: CompletionStatus
COMPLETION_STATUS_UNSPECIFIED: CompletionStatus
DESCRIPTOR: _descriptor.FileDescriptor

class BlockHashes(_message.Message):
    __slots__ = ["hashes"]
    HASHES_FIELD_NUMBER: _ClassVar[int]
    hashes: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, hashes: _Optional[_Iterable[int]] = ...) -> None: ...

class FirstTokenEmitted(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class LifecycleCounts(_message.Message):
    __slots__ = ["applied", "stale", "unknown_replica", "unknown_request"]
    APPLIED_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_REPLICA_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_REQUEST_FIELD_NUMBER: _ClassVar[int]
    applied: int
    stale: int
    unknown_replica: int
    unknown_request: int
    def __init__(self, applied: _Optional[int] = ..., unknown_request: _Optional[int] = ..., unknown_replica: _Optional[int] = ..., stale: _Optional[int] = ...) -> None: ...

class LifecycleEvent(_message.Message):
    __slots__ = ["admitted", "done", "first_token", "progress", "replica_id", "request_id", "time"]
    ADMITTED_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    FIRST_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    admitted: RequestAdmitted
    done: RequestDone
    first_token: FirstTokenEmitted
    progress: RequestProgress
    replica_id: str
    request_id: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, request_id: _Optional[str] = ..., replica_id: _Optional[str] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., admitted: _Optional[_Union[RequestAdmitted, _Mapping]] = ..., first_token: _Optional[_Union[FirstTokenEmitted, _Mapping]] = ..., progress: _Optional[_Union[RequestProgress, _Mapping]] = ..., done: _Optional[_Union[RequestDone, _Mapping]] = ...) -> None: ...

class PickReplicaRequest(_message.Message):
    __slots__ = ["block_hashes", "candidates", "dry_run", "hints", "lora_name", "model", "policy", "policy_params", "prompt_tokens", "request_id", "session_id", "text", "token_ids"]
    class PolicyParamsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    BLOCK_HASHES_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    HINTS_FIELD_NUMBER: _ClassVar[int]
    LORA_NAME_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    POLICY_PARAMS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_IDS_FIELD_NUMBER: _ClassVar[int]
    block_hashes: BlockHashes
    candidates: _containers.RepeatedScalarFieldContainer[str]
    dry_run: bool
    hints: RequestHints
    lora_name: str
    model: str
    policy: str
    policy_params: _containers.ScalarMap[str, float]
    prompt_tokens: int
    request_id: str
    session_id: str
    text: str
    token_ids: TokenIds
    def __init__(self, request_id: _Optional[str] = ..., model: _Optional[str] = ..., token_ids: _Optional[_Union[TokenIds, _Mapping]] = ..., block_hashes: _Optional[_Union[BlockHashes, _Mapping]] = ..., text: _Optional[str] = ..., prompt_tokens: _Optional[int] = ..., session_id: _Optional[str] = ..., candidates: _Optional[_Iterable[str]] = ..., lora_name: _Optional[str] = ..., hints: _Optional[_Union[RequestHints, _Mapping]] = ..., policy: _Optional[str] = ..., policy_params: _Optional[_Mapping[str, float]] = ..., dry_run: bool = ...) -> None: ...

class PickReplicaResponse(_message.Message):
    __slots__ = ["cached_tokens", "candidates", "decision_id", "dry_run", "fallbacks", "policy", "prompt_tokens", "replica_address", "replica_id"]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    cached_tokens: int
    candidates: _containers.RepeatedCompositeFieldContainer[_types_pb2.CandidateScore]
    decision_id: str
    dry_run: bool
    fallbacks: _containers.RepeatedScalarFieldContainer[str]
    policy: str
    prompt_tokens: int
    replica_address: str
    replica_id: str
    def __init__(self, replica_id: _Optional[str] = ..., decision_id: _Optional[str] = ..., fallbacks: _Optional[_Iterable[str]] = ..., prompt_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., candidates: _Optional[_Iterable[_Union[_types_pb2.CandidateScore, _Mapping]]] = ..., policy: _Optional[str] = ..., replica_address: _Optional[str] = ..., dry_run: bool = ...) -> None: ...

class ReportLifecycleRequest(_message.Message):
    __slots__ = ["events"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[LifecycleEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[LifecycleEvent, _Mapping]]] = ...) -> None: ...

class ReportLifecycleResponse(_message.Message):
    __slots__ = ["counts"]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    counts: LifecycleCounts
    def __init__(self, counts: _Optional[_Union[LifecycleCounts, _Mapping]] = ...) -> None: ...

class RequestAdmitted(_message.Message):
    __slots__ = ["cached_tokens", "prompt_tokens"]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    cached_tokens: int
    prompt_tokens: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ...) -> None: ...

class RequestDone(_message.Message):
    __slots__ = ["cached_prompt_tokens", "output_tokens", "status"]
    CACHED_PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    cached_prompt_tokens: int
    output_tokens: int
    status: CompletionStatus
    def __init__(self, output_tokens: _Optional[int] = ..., cached_prompt_tokens: _Optional[int] = ..., status: _Optional[_Union[CompletionStatus, str]] = ...) -> None: ...

class RequestHints(_message.Message):
    __slots__ = ["expected_output_tokens", "priority"]
    EXPECTED_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    expected_output_tokens: int
    priority: int
    def __init__(self, expected_output_tokens: _Optional[int] = ..., priority: _Optional[int] = ...) -> None: ...

class RequestProgress(_message.Message):
    __slots__ = ["generated_tokens"]
    GENERATED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    generated_tokens: int
    def __init__(self, generated_tokens: _Optional[int] = ...) -> None: ...

class StreamLifecycleRequest(_message.Message):
    __slots__ = ["events"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[LifecycleEvent]
    def __init__(self, events: _Optional[_Iterable[_Union[LifecycleEvent, _Mapping]]] = ...) -> None: ...

class StreamLifecycleResponse(_message.Message):
    __slots__ = ["counts"]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    counts: LifecycleCounts
    def __init__(self, counts: _Optional[_Union[LifecycleCounts, _Mapping]] = ...) -> None: ...

class TokenIds(_message.Message):
    __slots__ = ["ids"]
    IDS_FIELD_NUMBER: _ClassVar[int]
    ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, ids: _Optional[_Iterable[int]] = ...) -> None: ...

class CompletionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
