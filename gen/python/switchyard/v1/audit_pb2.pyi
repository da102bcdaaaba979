from google.protobuf import timestamp_pb2 as _timestamp_pb2
from switchyard.v1 import types_pb2 as _types_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Decision(_message.Message):
    __slots__ = ["cached_tokens", "candidates", "decision_id", "dry_run", "fallbacks", "model", "policy", "prompt_tokens", "replica_id", "request_id", "session_id", "time"]
    CACHED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    cached_tokens: int
    candidates: _containers.RepeatedCompositeFieldContainer[_types_pb2.CandidateScore]
    decision_id: str
    dry_run: bool
    fallbacks: _containers.RepeatedScalarFieldContainer[str]
    model: str
    policy: str
    prompt_tokens: int
    replica_id: str
    request_id: str
    session_id: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, decision_id: _Optional[str] = ..., request_id: _Optional[str] = ..., model: _Optional[str] = ..., session_id: _Optional[str] = ..., policy: _Optional[str] = ..., replica_id: _Optional[str] = ..., fallbacks: _Optional[_Iterable[str]] = ..., prompt_tokens: _Optional[int] = ..., cached_tokens: _Optional[int] = ..., candidates: _Optional[_Iterable[_Union[_types_pb2.CandidateScore, _Mapping]]] = ..., dry_run: bool = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetDecisionRequest(_message.Message):
    __slots__ = ["request_id"]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    def __init__(self, request_id: _Optional[str] = ...) -> None: ...

class GetDecisionResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    def __init__(self, decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class ListDecisionsRequest(_message.Message):
    __slots__ = ["limit", "model", "policy", "replica_id", "since", "until"]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    limit: int
    model: str
    policy: str
    replica_id: str
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    def __init__(self, model: _Optional[str] = ..., replica_id: _Optional[str] = ..., policy: _Optional[str] = ..., since: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListDecisionsResponse(_message.Message):
    __slots__ = ["decisions"]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[Decision]
    def __init__(self, decisions: _Optional[_Iterable[_Union[Decision, _Mapping]]] = ...) -> None: ...

class WatchDecisionsRequest(_message.Message):
    __slots__ = ["model", "policy", "replica_id"]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    POLICY_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    model: str
    policy: str
    replica_id: str
    def __init__(self, model: _Optional[str] = ..., replica_id: _Optional[str] = ..., policy: _Optional[str] = ...) -> None: ...

class WatchDecisionsResponse(_message.Message):
    __slots__ = ["decision", "skipped"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    decision: Decision
    skipped: int
    def __init__(self, decision: _Optional[_Union[Decision, _Mapping]] = ..., skipped: _Optional[int] = ...) -> None: ...
