"""Ray Serve request router backed by switchyard.

Use ``SwitchyardRequestRouter`` as a deployment's request router class, with
``request_router_kwargs`` holding ``SwitchyardRouting``'s keyword arguments
(at least ``target`` and ``model``). Importing this module does not import
Ray: the router class is built, subclassing Ray's ``RequestRouter``, the first
time ``SwitchyardRequestRouter`` is accessed, and that access raises
ImportError without Ray.

The routing logic lives in ``switchyard.routing`` and is tested without Ray;
``SwitchyardRouterMixin`` below only maps Ray's hook names onto it.
"""

from __future__ import annotations

import functools
from typing import List, Optional

from switchyard.routing import RoutingStats, SwitchyardRouting

__all__ = ["RoutingStats", "SwitchyardRouterMixin", "SwitchyardRouting", "request_router_class"]


class SwitchyardRouterMixin:
    """Ray ``RequestRouter`` hooks delegating to ``SwitchyardRouting``.
    Hooks that Ray's base class also implements are passed on to it."""

    _switchyard: Optional[SwitchyardRouting] = None

    def initialize_state(self, **kwargs) -> None:
        """Ray calls this with ``request_router_kwargs``."""
        self._switchyard = SwitchyardRouting(**kwargs)

    @property
    def switchyard(self) -> SwitchyardRouting:
        """The routing core (its ``stats`` tell how often it fell back)."""
        if self._switchyard is None:
            raise RuntimeError("switchyard router: initialize_state was not called; "
                               "set request_router_kwargs with at least target and model")
        return self._switchyard

    async def choose_replicas(self, candidate_replicas: List, pending_request=None) -> List[List]:
        """Ranks of replicas, best first (see SwitchyardRouting.choose)."""
        return await self.switchyard.choose(candidate_replicas, pending_request)

    def on_request_routed(self, pending_request, replica_id, result) -> None:
        """Report the request admitted on the replica Serve sent it to."""
        self._pass_on("on_request_routed", pending_request, replica_id, result)
        self.switchyard.routed(pending_request, replica_id)

    def on_request_completed(self, replica_id, internal_request_id: str) -> None:
        """Report the request done, freeing its load in switchyard."""
        self._pass_on("on_request_completed", replica_id, internal_request_id)
        self.switchyard.completed(replica_id, internal_request_id)

    def on_replica_actor_died(self, replica_id) -> None:
        """Deregister the replica from switchyard."""
        self._pass_on("on_replica_actor_died", replica_id)
        self.switchyard.replica_died(replica_id)

    def _pass_on(self, hook: str, *args) -> None:
        parent = getattr(super(), hook, None)
        if parent is not None:
            parent(*args)


@functools.lru_cache(maxsize=None)
def request_router_class() -> type:
    """``SwitchyardRequestRouter``: the mixin over Ray's ``RequestRouter``
    (imported here, once)."""
    try:
        from ray.serve.request_router import RequestRouter
    except ImportError as err:
        raise ImportError("switchyard.ray.SwitchyardRequestRouter needs Ray Serve (pip install 'ray[serve]'); "
                          "the rest of the switchyard package works without Ray") from err
    return type("SwitchyardRequestRouter", (SwitchyardRouterMixin, RequestRouter), {
        "__module__": __name__,
        "__qualname__": "SwitchyardRequestRouter",
        "__doc__": "Ray Serve RequestRouter that routes with switchyard (see switchyard.ray).",
    })


def __getattr__(name: str):
    if name == "SwitchyardRequestRouter":
        return request_router_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
