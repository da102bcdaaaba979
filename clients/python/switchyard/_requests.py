"""Builders shared by the blocking and asyncio clients: keyword arguments to
request messages, with the client-side checks that give clear errors."""

from __future__ import annotations

import uuid
from typing import Iterable, Mapping, Optional, Sequence

from switchyard.errors import InvalidArgumentError
from switchyard.v1 import replica_pb2, router_pb2

#: Replica states by name, for ``set_replica_state``.
STATES = {"ready": replica_pb2.REPLICA_STATE_READY, "draining": replica_pb2.REPLICA_STATE_DRAINING}


#: Channel options set unless the caller overrides them, so that a restarted
#: server is found again within about a second: gRPC's defaults re-resolve
#: the target at most every 30 s and back off reconnecting up to 120 s.
DEFAULT_CHANNEL_OPTIONS = {
    "grpc.dns_min_time_between_resolutions_ms": 500,
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.max_reconnect_backoff_ms": 5000,
}


def channel_options(options) -> list:
    """The defaults above updated with the caller's (name, value) pairs."""
    merged = dict(DEFAULT_CHANNEL_OPTIONS)
    merged.update(dict(options))
    return list(merged.items())


def pick_request(model: str, *, request_id: Optional[str] = None, token_ids: Optional[Sequence[int]] = None,
                 text: Optional[str] = None, block_hashes: Optional[Sequence[int]] = None, prompt_tokens: int = 0,
                 session_id: str = "", candidates: Iterable[str] = (), lora_name: str = "",
                 expected_output_tokens: int = 0, priority: int = 0, policy: str = "",
                 policy_params: Optional[Mapping[str, float]] = None,
                 dry_run: bool = False) -> router_pb2.PickReplicaRequest:
    """A PickReplicaRequest. Exactly one of token_ids, text or block_hashes
    is the prompt; request_id defaults to a fresh UUID."""
    given = [name for name, v in (("token_ids", token_ids), ("text", text), ("block_hashes", block_hashes))
             if v is not None]
    if len(given) != 1:
        raise InvalidArgumentError("PickReplica", f"prompt: give exactly one of token_ids, text or block_hashes, got {given or 'none'}")
    if not model:
        raise InvalidArgumentError("PickReplica", "model: required")
    req = router_pb2.PickReplicaRequest(
        request_id=request_id or uuid.uuid4().hex, model=model, prompt_tokens=prompt_tokens,
        session_id=session_id or "", candidates=list(candidates), lora_name=lora_name or "", policy=policy,
        policy_params=dict(policy_params or {}), dry_run=dry_run)
    if token_ids is not None:
        req.token_ids.ids.extend(token_ids)
    elif block_hashes is not None:
        req.block_hashes.hashes.extend(block_hashes)
    else:
        req.text = text
    if expected_output_tokens or priority:
        req.hints.expected_output_tokens = expected_output_tokens
        req.hints.priority = priority
    return req


def replica(replica_id: str, model: str, *, address: str = "", kv_blocks: int = 0, max_batched_tokens: int = 0,
            labels: Optional[Mapping[str, str]] = None, state: str = "ready") -> replica_pb2.Replica:
    """A Replica message for RegisterReplica."""
    return replica_pb2.Replica(
        id=replica_id, model=model, address=address, labels=dict(labels or {}), state=state_value(state),
        capacity=replica_pb2.ReplicaCapacity(kv_blocks=kv_blocks, max_batched_tokens=max_batched_tokens))


def state_value(state: str) -> int:
    """The ReplicaState enum value for "ready" or "draining"."""
    if state not in STATES:
        raise InvalidArgumentError("ReplicaState", f"state: want one of {sorted(STATES)}, got {state!r}")
    return STATES[state]
