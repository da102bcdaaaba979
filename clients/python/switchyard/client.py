"""The blocking switchyard client."""

from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple

import grpc

from switchyard import _requests
from switchyard.errors import ClosedError, from_rpc_error
from switchyard.lifecycle import LifecycleReporter
from switchyard.v1 import replica_pb2, replica_pb2_grpc, router_pb2, router_pb2_grpc

#: Seconds a call may take unless told otherwise.
DEFAULT_TIMEOUT = 2.0


class SwitchyardClient:
    """Blocking client for one switchyard server, safe to share between
    threads.

    ``target`` is the server's address ("host:port"). Calls time out after
    ``timeout`` seconds (each call can override it) and raise a
    ``SwitchyardError`` subclass on failure. The connection is plaintext
    unless ``credentials`` are given; ``channel`` uses an existing channel
    instead (the caller keeps owning it). Responses are the generated protobuf
    messages of ``switchyard.v1``.
    """

    def __init__(self, target: str = "", *, timeout: float = DEFAULT_TIMEOUT,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 options: Sequence[Tuple[str, object]] = (), channel: Optional[grpc.Channel] = None):
        if channel is None and not target:
            raise ValueError("SwitchyardClient: give a target address or a channel")
        self._owns_channel = channel is None
        if channel is None:
            channel = (grpc.secure_channel(target, credentials, options=_requests.channel_options(options)) if credentials
                       else grpc.insecure_channel(target, options=_requests.channel_options(options)))
        self._channel = channel
        self._router = router_pb2_grpc.RouterServiceStub(channel)
        self._replicas = replica_pb2_grpc.ReplicaServiceStub(channel)
        self.timeout = timeout
        self._closed = False

    def _call(self, op: str, method, request, timeout: Optional[float]):
        if self._closed:
            raise ClosedError(op, "the client is closed")
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as err:
            raise from_rpc_error(op, err) from err

    def pick(self, model: str, *, timeout: Optional[float] = None, **kwargs) -> router_pb2.PickReplicaResponse:
        """Ask which replica gets a request and reserve its load there.

        Give the prompt as exactly one of ``token_ids``, ``text`` or
        ``block_hashes``. Other keywords: ``request_id`` (default: a fresh
        UUID; retrying with the same id returns the same decision),
        ``prompt_tokens``, ``session_id``, ``candidates`` (replica ids; empty =
        every ready replica), ``lora_name``, ``expected_output_tokens``,
        ``priority``, ``policy``, ``policy_params``, ``dry_run``. Returns the
        PickReplicaResponse: ``replica_id``, ranked ``fallbacks``,
        ``cached_tokens``, per-candidate scores and more.
        """
        return self._call("PickReplica", self._router.PickReplica, _requests.pick_request(model, **kwargs), timeout)

    def report(self, events: Iterable, *, timeout: Optional[float] = None) -> router_pb2.LifecycleCounts:
        """Send one batch of lifecycle events (see ``switchyard.events``) and
        return the server's counts. For a steady flow use ``lifecycle()``."""
        req = router_pb2.ReportLifecycleRequest(events=list(events))
        return self._call("ReportLifecycle", self._router.ReportLifecycle, req, timeout).counts

    def lifecycle(self, **options) -> LifecycleReporter:
        """A background reporter that batches lifecycle events; options:
        ``batch_size`` (256), ``buffer_size`` (65536), ``flush_interval``
        (0.005 s), ``backoff`` ((0.05, 5.0) s). Close it before the client."""
        if self._closed:
            raise ClosedError("lifecycle", "the client is closed")
        return LifecycleReporter(self._router, timeout=self.timeout, **options)

    def register_replica(self, replica_id: str, model: str, *, timeout: Optional[float] = None,
                         **fields) -> replica_pb2.ReplicaStatus:
        """Register (or update) a replica; ``fields``: ``address``,
        ``kv_blocks``, ``max_batched_tokens``, ``labels``, ``state``."""
        req = replica_pb2.RegisterReplicaRequest(replica=_requests.replica(replica_id, model, **fields))
        return self._call("RegisterReplica", self._replicas.RegisterReplica, req, timeout).status

    def deregister_replica(self, replica_id: str, *, timeout: Optional[float] = None) -> None:
        """Remove a replica with its cache entries and reservations."""
        req = replica_pb2.DeregisterReplicaRequest(replica_id=replica_id)
        self._call("DeregisterReplica", self._replicas.DeregisterReplica, req, timeout)

    def set_replica_state(self, replica_id: str, state: str, *,
                          timeout: Optional[float] = None) -> replica_pb2.ReplicaStatus:
        """Mark a replica "ready" or "draining" (takes no new requests)."""
        req = replica_pb2.SetReplicaStateRequest(replica_id=replica_id, state=_requests.state_value(state))
        return self._call("SetReplicaState", self._replicas.SetReplicaState, req, timeout).status

    def list_replicas(self, model: str = "", *, timeout: Optional[float] = None) -> List[replica_pb2.ReplicaStatus]:
        """Replicas of ``model`` (all when empty) with live load and cache."""
        req = replica_pb2.ListReplicasRequest(model=model)
        return list(self._call("ListReplicas", self._replicas.ListReplicas, req, timeout).replicas)

    def close(self) -> None:
        """Close the channel (if the client created it)."""
        if not self._closed and self._owns_channel:
            self._channel.close()
        self._closed = True

    def __enter__(self) -> "SwitchyardClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
