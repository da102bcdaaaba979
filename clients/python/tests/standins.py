"""Stand-ins for Ray Serve's request-router types.

Ray cannot be installed where these tests run. These small classes carry the
attribute and method names of ``ray.serve.request_router``'s ``ReplicaID``,
``RunningReplica``, ``PendingRequest`` (with its ``RequestMetadata``) and
``RequestRouter``, as documented by Ray Serve, and nothing else: they let the
adapter's logic run against the real switchyard server. They are not Ray, and
passing tests with them says nothing about a given Ray version.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Dict, List, Optional, Set


@dataclasses.dataclass(frozen=True)
class ReplicaID:
    """Stand-in for ray.serve.request_router.ReplicaID."""

    unique_id: str
    deployment_id: str = "app#llm"

    def to_full_id_str(self) -> str:
        return f"{self.deployment_id}#{self.unique_id}"


@dataclasses.dataclass
class RunningReplica:
    """Stand-in for ray.serve.request_router.RunningReplica."""

    replica_id: ReplicaID
    node_id: str = "node-1"
    availability_zone: Optional[str] = "az-1"
    multiplexed_model_ids: Set[str] = dataclasses.field(default_factory=set)
    routing_stats: Dict[str, Any] = dataclasses.field(default_factory=dict)
    max_ongoing_requests: int = 16
    queue_len: int = 0

    def get_queue_len(self, *, deadline_s: float = 1.0) -> int:
        return self.queue_len


@dataclasses.dataclass
class RequestMetadata:
    """Stand-in for the metadata of a PendingRequest."""

    request_id: str
    internal_request_id: str
    multiplexed_model_id: str = ""
    session_id: Optional[str] = None
    is_streaming: bool = False
    app_name: str = "app"
    route: str = "/v1/chat/completions"


@dataclasses.dataclass
class PendingRequest:
    """Stand-in for ray.serve.request_router.PendingRequest."""

    args: List[Any]
    kwargs: Dict[str, Any]
    metadata: RequestMetadata
    created_at: float = dataclasses.field(default_factory=time.time)


class RequestRouter:
    """Stand-in for ray.serve.request_router.RequestRouter: records the base
    hooks a subclass passes calls on to."""

    def __init__(self, *args, **kwargs):
        self.base_calls = []

    def on_request_routed(self, pending_request, replica_id, result):
        self.base_calls.append(("on_request_routed", replica_id))

    def on_replica_actor_died(self, replica_id):
        self.base_calls.append(("on_replica_actor_died", replica_id))


def replicas(*names: str) -> List[RunningReplica]:
    """Running replicas with the given unique ids."""
    return [RunningReplica(ReplicaID(n)) for n in names]


def request(n: int, tokens=None, text=None, session=None, model_id="") -> PendingRequest:
    """A pending request numbered n, with token ids (Ray's KV-aware path),
    a chat prompt, or neither."""
    kwargs = {} if tokens is None else {"request_token_ids": list(tokens)}
    args = [] if text is None else [{"messages": [{"role": "user", "content": text}]}]
    md = RequestMetadata(request_id=f"user-{n}", internal_request_id=f"internal-{n}", session_id=session,
                         multiplexed_model_id=model_id)
    return PendingRequest(args=args, kwargs=kwargs, metadata=md)
