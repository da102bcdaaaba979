"""The asyncio switchyard client and its lifecycle reporter."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Iterable, List, Optional, Sequence, Tuple

import grpc
import grpc.aio

from switchyard import _requests
from switchyard._batcher import ReporterBase
from switchyard.client import DEFAULT_TIMEOUT
from switchyard.errors import ClosedError, from_rpc_error
from switchyard.v1 import replica_pb2, replica_pb2_grpc, router_pb2, router_pb2_grpc

log = logging.getLogger("switchyard")


class AsyncSwitchyardClient:
    """asyncio client for one switchyard server: the methods of
    ``SwitchyardClient`` as coroutines, with the same arguments, timeouts and
    exceptions. Create it inside a running event loop (gRPC's asyncio
    channels belong to one loop) and ``await close()`` it, or use
    ``async with``."""

    def __init__(self, target: str = "", *, timeout: float = DEFAULT_TIMEOUT,
                 credentials: Optional[grpc.ChannelCredentials] = None,
                 options: Sequence[Tuple[str, object]] = (), channel: Optional[grpc.aio.Channel] = None):
        if channel is None and not target:
            raise ValueError("AsyncSwitchyardClient: give a target address or a channel")
        self._owns_channel = channel is None
        if channel is None:
            channel = (grpc.aio.secure_channel(target, credentials, options=_requests.channel_options(options)) if credentials
                       else grpc.aio.insecure_channel(target, options=_requests.channel_options(options)))
        self._channel = channel
        self._router = router_pb2_grpc.RouterServiceStub(channel)
        self._replicas = replica_pb2_grpc.ReplicaServiceStub(channel)
        self.timeout = timeout
        self._closed = False

    async def _call(self, op: str, method, request, timeout: Optional[float]):
        if self._closed:
            raise ClosedError(op, "the client is closed")
        try:
            return await method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as err:
            raise from_rpc_error(op, err) from err

    async def pick(self, model: str, *, timeout: Optional[float] = None, **kwargs) -> router_pb2.PickReplicaResponse:
        """See ``SwitchyardClient.pick``."""
        return await self._call("PickReplica", self._router.PickReplica, _requests.pick_request(model, **kwargs),
                                timeout)

    async def report(self, events: Iterable, *, timeout: Optional[float] = None) -> router_pb2.LifecycleCounts:
        """See ``SwitchyardClient.report``."""
        req = router_pb2.ReportLifecycleRequest(events=list(events))
        return (await self._call("ReportLifecycle", self._router.ReportLifecycle, req, timeout)).counts

    def lifecycle(self, **options) -> "AsyncLifecycleReporter":
        """A batching lifecycle reporter running as a task on the current
        loop; options as ``SwitchyardClient.lifecycle``."""
        if self._closed:
            raise ClosedError("lifecycle", "the client is closed")
        return AsyncLifecycleReporter(self._router, timeout=self.timeout, **options)

    async def register_replica(self, replica_id: str, model: str, *, timeout: Optional[float] = None,
                               **fields) -> replica_pb2.ReplicaStatus:
        """See ``SwitchyardClient.register_replica``."""
        req = replica_pb2.RegisterReplicaRequest(replica=_requests.replica(replica_id, model, **fields))
        return (await self._call("RegisterReplica", self._replicas.RegisterReplica, req, timeout)).status

    async def deregister_replica(self, replica_id: str, *, timeout: Optional[float] = None) -> None:
        """See ``SwitchyardClient.deregister_replica``."""
        req = replica_pb2.DeregisterReplicaRequest(replica_id=replica_id)
        await self._call("DeregisterReplica", self._replicas.DeregisterReplica, req, timeout)

    async def set_replica_state(self, replica_id: str, state: str, *,
                                timeout: Optional[float] = None) -> replica_pb2.ReplicaStatus:
        """See ``SwitchyardClient.set_replica_state``."""
        req = replica_pb2.SetReplicaStateRequest(replica_id=replica_id, state=_requests.state_value(state))
        return (await self._call("SetReplicaState", self._replicas.SetReplicaState, req, timeout)).status

    async def list_replicas(self, model: str = "", *,
                            timeout: Optional[float] = None) -> List[replica_pb2.ReplicaStatus]:
        """See ``SwitchyardClient.list_replicas``."""
        req = replica_pb2.ListReplicasRequest(model=model)
        return list((await self._call("ListReplicas", self._replicas.ListReplicas, req, timeout)).replicas)

    async def close(self) -> None:
        """Close the channel (if the client created it)."""
        if not self._closed and self._owns_channel:
            await self._channel.close()
        self._closed = True

    async def __aenter__(self) -> "AsyncSwitchyardClient":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()


class AsyncLifecycleReporter(ReporterBase):
    """``LifecycleReporter`` for asyncio: the sender is a task on the loop
    that created the reporter. ``report`` and the event methods are plain
    (non-blocking) functions and may be called from any thread; ``flush`` and
    ``close`` are coroutines."""

    def __init__(self, stub, *, timeout: float, **options):
        super().__init__(stub, timeout=timeout, **options)
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._settled = self._loop.create_future()  # resolved and replaced when events settle
        self._task = self._loop.create_task(self._run())

    def report(self, event) -> None:
        """See ``LifecycleReporter.report``."""
        super().report(event)
        self._poke()

    async def flush(self, timeout: Optional[float] = None) -> bool:
        """See ``LifecycleReporter.flush``."""
        deadline = None if timeout is None else self._loop.time() + timeout
        with self._b.cond:
            target = self._b.last_seq()
            self._b.flushers += 1
        self._wake.set()
        try:
            while True:
                with self._b.cond:
                    if self._b.settled(target):
                        return True
                left = None if deadline is None else deadline - self._loop.time()
                if (left is not None and left <= 0) or self._task.done():
                    return False
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self._settled), left)
        finally:
            with self._b.cond:
                self._b.flushers -= 1

    async def close(self, timeout: Optional[float] = 5.0) -> bool:
        """See ``LifecycleReporter.close``."""
        with self._b.cond:
            already = self._b.closed
            self._b.closed = True
        self._wake.set()
        if not already:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout)
            except asyncio.TimeoutError:
                self._task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._task
        return self._b.drop_all() == 0

    def _poke(self) -> None:
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is self._loop:
            self._wake.set()
        else:
            self._loop.call_soon_threadsafe(self._wake.set)

    def _signal(self) -> None:
        fut, self._settled = self._settled, self._loop.create_future()
        fut.set_result(None)

    async def _run(self) -> None:
        fails = 0
        while True:
            with self._b.cond:
                batch, wait = self._b.take(urgent=self._b.flushers > 0 or self._b.closed)
                finished = batch is None and self._b.closed and self._b.held() == 0
            if finished:
                self._signal()
                return
            if batch is None:
                self._wake.clear()
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), wait)
                self._signal()
                continue
            try:
                resp = await self._stub.ReportLifecycle(router_pb2.ReportLifecycleRequest(events=batch),
                                                        timeout=self._timeout)
            except grpc.RpcError as err:
                fails += 1
                delay = self._b.failed(err.code(), fails)
                self._signal()
                if delay == 0:
                    log.error("switchyard: lifecycle batch rejected, %d events dropped: %s", len(batch), err.details())
                else:
                    log.warning("switchyard: lifecycle batch failed (%s); retrying in %.3fs", err.code(), delay)
                    await asyncio.sleep(delay)
                continue
            fails = 0
            self._b.delivered(resp.counts)
            self._signal()
