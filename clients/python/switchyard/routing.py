"""The logic of switchyard's Ray Serve request router, free of Ray.

``SwitchyardRouting`` works on objects that have the attribute names of Ray
Serve's ``RunningReplica``, ``ReplicaID`` and ``PendingRequest`` (it only reads
them), so it runs and is tested without Ray; ``switchyard.ray`` connects it to
Ray's ``RequestRouter`` hooks.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import random
import time
import uuid
from typing import Callable, Dict, List, Optional, Sequence

from switchyard.aio import AsyncSwitchyardClient
from switchyard.client import SwitchyardClient
from switchyard.errors import NotFoundError, SwitchyardError

log = logging.getLogger("switchyard.ray")


@dataclasses.dataclass
class RoutingStats:
    """What the router did, for monitoring the switchyard dependency."""

    #: Requests routed by switchyard's decision.
    picks: int = 0
    #: Requests routed by the fallback (power of two choices).
    fallbacks: int = 0
    #: Failed attempts to ask switchyard (each starts a retry interval).
    errors: int = 0
    #: Fallbacks taken without asking, inside a retry interval.
    skipped: int = 0
    #: Replicas registered with switchyard by this router.
    registered: int = 0


def replica_key(replica_id) -> str:
    """switchyard's id for a Ray replica: ``ReplicaID.unique_id`` (the id
    engine sidecars should publish KV events under), else ``str()``."""
    return getattr(replica_id, "unique_id", None) or str(replica_id)


def request_id(pending) -> str:
    """The id a request is picked and reported under: the request's
    ``internal_request_id`` (what ``on_request_completed`` receives)."""
    md = getattr(pending, "metadata", None)
    return getattr(md, "internal_request_id", None) or getattr(md, "request_id", None) or uuid.uuid4().hex


def _field(obj, name):
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def prompt_text(pending) -> str:
    """The prompt as text, found the way Ray Serve LLM passes requests: the
    first argument (or keyword argument) that is a string or has a ``prompt``
    or ``messages`` field (OpenAI completion / chat shapes). "" if none."""
    values = list(getattr(pending, "args", None) or ()) + list((getattr(pending, "kwargs", None) or {}).values())
    for v in values:
        if isinstance(v, str):
            return v
        prompt = _field(v, "prompt")
        if isinstance(prompt, str):
            return prompt
        if isinstance(prompt, (list, tuple)) and all(isinstance(p, str) for p in prompt):
            return "\n".join(prompt)
        messages = _field(v, "messages")
        if isinstance(messages, (list, tuple)):
            parts = []
            for m in messages:
                content = _field(m, "content")
                if isinstance(content, str):
                    parts.append(content)
                elif isinstance(content, (list, tuple)):
                    parts.extend(_field(p, "text") for p in content if isinstance(_field(p, "text"), str))
            return "\n".join(parts)
    return ""


class SwitchyardRouting:
    """Routes Ray Serve requests with switchyard, falling back to power of
    two choices when switchyard cannot answer within ``timeout_s``.

    ``choose`` asks PickReplica with the candidates' ids, the prompt
    (``kwargs["request_token_ids"]`` if present, else the prompt text), the
    session id and multiplexed model id (as LoRA name) from the request
    metadata, and returns singleton ranks ``[[chosen], [fallback1], ...]``.
    After a failure switchyard is not asked again for ``retry_interval_s``
    seconds, so an outage costs one timeout, not one per request. The
    fallback returns one rank of two random candidates (preferring those that
    hold the request's multiplexed model): Serve sends to the one with the
    shorter queue, as its default router does.

    ``routed``/``completed`` report the request's admission and end through a
    batching lifecycle reporter; ``replica_died`` deregisters the replica.
    With ``auto_register`` (default), candidates switchyard does not know are
    registered for ``model`` before picking.
    """

    def __init__(self, *, target: str, model: str, timeout_s: float = 0.25, retry_interval_s: float = 1.0,
                 auto_register: bool = True, deregister_dead_replicas: bool = True, policy: str = "",
                 lora_from_multiplexed_model_id: bool = True, report_lifecycle: bool = True,
                 lifecycle_options: Optional[dict] = None, clock: Callable[[], float] = time.monotonic,
                 rng: Optional[random.Random] = None):
        if not target or not model:
            raise ValueError(f"switchyard router: target and model are required, got target={target!r} model={model!r}")
        if timeout_s <= 0 or retry_interval_s < 0:
            raise ValueError(f"switchyard router: want timeout_s > 0 and retry_interval_s >= 0, got {timeout_s}, {retry_interval_s}")
        self.target, self.model, self.timeout_s, self.retry_interval_s = target, model, timeout_s, retry_interval_s
        self.auto_register, self.deregister_dead_replicas = auto_register, deregister_dead_replicas
        self.policy, self.lora_from_multiplexed_model_id = policy, lora_from_multiplexed_model_id
        self._clock = clock
        self._rng = rng or random.Random()
        self.stats = RoutingStats()
        self._retry_at = float("-inf")
        self._registered: set = set()
        # Background work (lifecycle batches, deregistration) uses a blocking
        # client on its own threads, so Ray's hooks never wait on the network.
        self._sync = SwitchyardClient(target, timeout=max(1.0, timeout_s))
        self.lifecycle = self._sync.lifecycle(**(lifecycle_options or {})) if report_lifecycle else None
        self._bg = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="switchyard-router")
        self._aio: Optional[AsyncSwitchyardClient] = None
        self._aio_loop = None

    async def choose(self, candidates: Sequence, pending=None) -> List[list]:
        """Ranks of ``candidates`` for ``pending``, best first."""
        candidates = list(candidates)
        if not candidates:
            return []
        if pending is None:
            return self._fallback(candidates, None)
        now = self._clock()
        if now < self._retry_at:
            self.stats.skipped += 1
            return self._fallback(candidates, pending)
        try:
            ranks = await asyncio.wait_for(self._ask(candidates, pending), self.timeout_s)
        except (SwitchyardError, asyncio.TimeoutError) as err:
            self.stats.errors += 1
            self._retry_at = now + self.retry_interval_s
            log.warning("switchyard: pick failed (%s); routing by power of two choices for %.1fs",
                        err or "timed out", self.retry_interval_s)
            return self._fallback(candidates, pending)
        if not ranks:
            return self._fallback(candidates, pending)
        self.stats.picks += 1
        return ranks

    def routed(self, pending, replica_id) -> None:
        """The request was sent to ``replica_id``: report it admitted there."""
        if self.lifecycle is not None and pending is not None:
            self.lifecycle.admitted(request_id(pending), replica_key(replica_id))

    def completed(self, replica_id, internal_request_id: str) -> None:
        """The request finished: report it done, freeing its load."""
        if self.lifecycle is not None and internal_request_id:
            self.lifecycle.done(internal_request_id, replica_key(replica_id))

    def replica_died(self, replica_id) -> None:
        """The replica's actor died: deregister it in the background."""
        key = replica_key(replica_id)
        self._registered.discard(key)
        if self.deregister_dead_replicas:
            self._bg.submit(self._deregister, key)

    async def aclose(self) -> None:
        """Flush lifecycle events and release connections."""
        if self.lifecycle is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.lifecycle.close)
        self._bg.shutdown(wait=True)
        self._sync.close()
        if self._aio is not None and self._aio_loop is asyncio.get_running_loop():
            await self._aio.close()

    def _client(self) -> AsyncSwitchyardClient:
        loop = asyncio.get_running_loop()
        if self._aio is None or self._aio_loop is not loop:  # gRPC asyncio channels belong to one loop
            self._aio, self._aio_loop = AsyncSwitchyardClient(self.target, timeout=self.timeout_s), loop
        return self._aio

    async def _ask(self, candidates: list, pending) -> List[list]:
        client = self._client()
        by_id: Dict[str, object] = {replica_key(r.replica_id): r for r in candidates}
        if self.auto_register:
            await self._register(client, candidates)
        args = self._pick_args(pending, list(by_id))
        try:
            resp = await client.pick(self.model, **args)
        except NotFoundError:
            if not self.auto_register:
                raise
            # The server forgot the model (it restarted): register again.
            self._registered.clear()
            await self._register(client, candidates)
            resp = await client.pick(self.model, **args)
        for c in resp.candidates:
            if c.ineligible_reason == "not_registered":
                self._registered.discard(c.replica_id)
        return [[by_id[i]] for i in [resp.replica_id, *resp.fallbacks] if i in by_id]

    def _pick_args(self, pending, candidate_ids: List[str]) -> dict:
        md = getattr(pending, "metadata", None)
        args = dict(request_id=request_id(pending), candidates=candidate_ids, policy=self.policy,
                    session_id=getattr(md, "session_id", None) or "")
        if self.lora_from_multiplexed_model_id:
            args["lora_name"] = getattr(md, "multiplexed_model_id", None) or ""
        tokens = (getattr(pending, "kwargs", None) or {}).get("request_token_ids")
        if tokens is not None:
            args["token_ids"] = list(tokens)
        else:
            args["text"] = prompt_text(pending)
        return args

    async def _register(self, client: AsyncSwitchyardClient, candidates: list) -> None:
        new = [r for r in candidates if replica_key(r.replica_id) not in self._registered]
        if not new:
            return
        keys = [replica_key(r.replica_id) for r in new]
        self._registered.update(keys)  # claimed now, so concurrent requests do not register twice
        try:
            await asyncio.gather(*(client.register_replica(k, self.model, labels=self._labels(r))
                                   for k, r in zip(keys, new)))
        except BaseException:
            self._registered.difference_update(keys)
            raise
        self.stats.registered += len(keys)

    @staticmethod
    def _labels(replica) -> Dict[str, str]:
        labels = {}
        for name in ("node_id", "availability_zone"):
            value = getattr(replica, name, None)
            if value:
                labels[name] = str(value)
        return labels

    def _deregister(self, key: str) -> None:
        try:
            self._sync.deregister_replica(key)
        except NotFoundError:
            pass
        except SwitchyardError as err:
            log.warning("switchyard: could not deregister dead replica %s: %s", key, err)

    def _fallback(self, candidates: list, pending) -> List[list]:
        self.stats.fallbacks += 1
        pool = candidates
        model_id = getattr(getattr(pending, "metadata", None), "multiplexed_model_id", None)
        if model_id:
            pool = [r for r in candidates if model_id in (getattr(r, "multiplexed_model_ids", None) or ())] or candidates
        return [self._rng.sample(pool, min(2, len(pool)))]
