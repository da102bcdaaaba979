"""The Ray Serve adapter, driven through Ray's hook names with the stand-ins
of ``standins.py`` (not Ray) against the real server."""

from __future__ import annotations

import asyncio
import pickle
import random
import subprocess
import sys
import time

import pytest

import switchyard
from switchyard import routing
from switchyard.ray import SwitchyardRouterMixin

from standins import RequestRouter, ReplicaID, replicas, request

FAST = [("grpc.dns_min_time_between_resolutions_ms", 20), ("grpc.initial_reconnect_backoff_ms", 20),
        ("grpc.max_reconnect_backoff_ms", 100)]


class Router(SwitchyardRouterMixin, RequestRouter):
    """What switchyard.ray builds on Ray's RequestRouter, built on the
    stand-in instead."""


class FakeClock:
    """A clock the test moves, for the retry interval."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def make_router(addr, **kwargs) -> Router:
    r = Router("deployment-id", "handle-source")
    kwargs.setdefault("rng", random.Random(7))
    kwargs.setdefault("timeout_s", 2.0)
    r.initialize_state(target=addr, model="llama", **kwargs)
    return r


def ids(ranks):
    return [[rep.replica_id.unique_id for rep in rank] for rank in ranks]


def load(addr, model="llama"):
    with switchyard.SwitchyardClient(addr) as c:
        return {r.replica.id: r.load.active_requests for r in c.list_replicas(model)}


def test_choose_replicas_ranks_and_lifecycle(server):
    async def main():
        router = make_router(server.addr)
        cands = replicas("r1", "r2", "r3")
        prompt = list(range(128))
        first = await router.choose_replicas(cands, request(1, tokens=prompt))
        assert all(len(rank) == 1 for rank in first), "want singleton ranks"
        assert sorted(sum(ids(first), [])) == ["r1", "r2", "r3"]
        chosen = first[0][0]
        assert load(server.addr) == {"r1": 0, "r2": 0, "r3": 0, chosen.replica_id.unique_id: 1}
        assert router.switchyard.stats.registered == 3

        # Serve routes to the chosen replica and the request completes.
        router.on_request_routed(request(1, tokens=prompt), chosen.replica_id, None)
        router.on_request_completed(chosen.replica_id, "internal-1")
        assert router.switchyard.lifecycle.flush(timeout=10)
        st = router.switchyard.lifecycle.stats
        assert (st.delivered, st.applied) == (2, 2)
        assert sum(load(server.addr).values()) == 0
        assert router.base_calls == [("on_request_routed", chosen.replica_id)]

        # The same tokens again: the first decision's blocks are predicted on
        # the chosen replica, so it ranks first.
        again = await router.choose_replicas(cands, request(2, tokens=prompt))
        assert again[0][0] is chosen

        # Only the offered candidates are ranked.
        sub = await router.choose_replicas(cands[1:], request(3, tokens=list(range(500, 532))))
        assert sorted(sum(ids(sub), [])) == ["r2", "r3"]
        assert router.switchyard.stats.picks == 3 and router.switchyard.stats.fallbacks == 0
        await router.switchyard.aclose()
    asyncio.run(main())


def test_session_and_text_prompt_reach_the_server(server):
    """With the consistent-hash policy, the session id from the metadata
    decides; chat messages serve as the prompt."""
    async def main():
        router = make_router(server.addr, policy="consistent_hash")
        cands = replicas("r1", "r2", "r3", "r4")
        chosen = set()
        for n in range(6):
            ranks = await router.choose_replicas(cands, request(n, text=f"question {n}", session="conv-42"))
            chosen.add(ranks[0][0].replica_id.unique_id)
        assert len(chosen) == 1, f"one session went to {chosen}"
        await router.switchyard.aclose()
    asyncio.run(main())


def test_replica_death_deregisters(server):
    async def main():
        router = make_router(server.addr)
        cands = replicas("r1", "r2")
        await router.choose_replicas(cands, request(1, text="hi"))
        router.on_replica_actor_died(ReplicaID("r2"))
        await router.switchyard.aclose()  # waits for the background deregistration
        assert set(load(server.addr)) == {"r1"}
        assert router.base_calls == [("on_replica_actor_died", ReplicaID("r2"))]
    asyncio.run(main())


def test_fallback_when_server_killed_mid_test(server):
    """switchyard dies between two requests: the router falls back to power
    of two choices, skips switchyard for the retry interval, and uses it
    again once it is back (re-registering the replicas the new process does
    not know)."""
    clock = FakeClock()

    async def main():
        router = make_router(server.addr, timeout_s=1.0, retry_interval_s=5.0, clock=clock,
                             lifecycle_options={"backoff": (0.01, 0.05)})
        cands = replicas("r1", "r2", "r3")
        ok = await router.choose_replicas(cands, request(1, tokens=list(range(64))))
        assert [len(rank) for rank in ok] == [1, 1, 1]

        server.kill()
        t0 = time.monotonic()
        fb = await router.choose_replicas(cands, request(2, tokens=list(range(64))))
        assert time.monotonic() - t0 < 5, "the fallback must come within the bounded timeout"
        assert len(fb) == 1 and len(fb[0]) == 2 and len(set(map(id, fb[0]))) == 2
        assert all(r in cands for r in fb[0])
        st = router.switchyard.stats
        assert (st.picks, st.errors, st.fallbacks, st.skipped) == (1, 1, 1, 0)

        # Inside the retry interval switchyard is not asked.
        skipped = await router.choose_replicas(cands, request(3, tokens=list(range(64))))
        assert len(skipped[0]) == 2 and router.switchyard.stats.skipped == 1

        # Back up (a new, empty process on the same port) after the interval.
        await asyncio.get_running_loop().run_in_executor(None, server.restart)
        clock.now += 6
        for attempt in range(50):  # the channel may need a moment to reconnect
            ranks = await router.choose_replicas(cands, request(10 + attempt, tokens=list(range(64))))
            if router.switchyard.stats.picks == 2:
                break
            clock.now += 6
            await asyncio.sleep(0.05)
        assert router.switchyard.stats.picks == 2, router.switchyard.stats
        assert [len(rank) for rank in ranks] == [1, 1, 1]
        assert sum(load(server.addr).values()) == 1
    asyncio.run(main())


def test_fallback_after_bounded_timeout_on_hung_server(silent_addr):
    async def main():
        router = make_router(silent_addr, timeout_s=0.2, report_lifecycle=False)
        cands = replicas("r1", "r2", "r3")
        t0 = time.monotonic()
        ranks = await router.choose_replicas(cands, request(1, text="hello"))
        assert time.monotonic() - t0 < 5
        assert len(ranks) == 1 and len(ranks[0]) == 2
        assert router.switchyard.stats.errors == 1
    asyncio.run(main())


def test_fallback_prefers_replicas_with_the_multiplexed_model(dead_addr):
    clock = FakeClock()

    async def main():
        router = make_router(dead_addr, timeout_s=0.5, clock=clock, report_lifecycle=False)
        cands = replicas("r1", "r2", "r3", "r4")
        cands[1].multiplexed_model_ids = {"lora-a"}
        cands[3].multiplexed_model_ids = {"lora-a", "lora-b"}
        for n in range(5):
            ranks = await router.choose_replicas(cands, request(n, text="x", model_id="lora-a"))
            assert sorted(ids(ranks)[0]) == ["r2", "r4"]
        only = await router.choose_replicas(cands[:1], request(9, text="x"))
        assert ids(only) == [["r1"]]
        assert await router.choose_replicas([], request(10, text="x")) == []
        st = router.switchyard.stats
        assert st.errors == 1 and st.skipped == 5
    asyncio.run(main())


@pytest.mark.parametrize("args, kwargs, want", [
    (["plain prompt"], {}, "plain prompt"),
    ([{"prompt": "completion prompt"}], {}, "completion prompt"),
    ([{"prompt": ["a", "b"]}], {}, "a\nb"),
    ([{"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]}], {}, "be brief\nhi"),
    ([{"messages": [{"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image_url"}]}]}], {}, "part"),
    ([], {"request": {"prompt": "from kwargs"}}, "from kwargs"),
    ([object()], {}, ""),
    ([], {}, ""),
])
def test_prompt_text(args, kwargs, want):
    class Obj:
        pass
    pending = Obj()
    pending.args, pending.kwargs = args, kwargs
    assert routing.prompt_text(pending) == want


def test_request_and_replica_ids():
    pending = request(5)
    assert routing.request_id(pending) == "internal-5"
    assert routing.replica_key(ReplicaID("abc")) == "abc"
    assert routing.replica_key("plain") == "plain"


def test_config_errors():
    with pytest.raises(ValueError, match="target and model"):
        routing.SwitchyardRouting(target="", model="m")
    with pytest.raises(ValueError, match="timeout_s"):
        routing.SwitchyardRouting(target="x:1", model="m", timeout_s=0)
    with pytest.raises(RuntimeError, match="initialize_state"):
        Router().switchyard


def test_module_imports_without_ray():
    code = ("import sys, switchyard.ray as r; assert 'ray' not in sys.modules\n"
            "try:\n    r.SwitchyardRequestRouter\nexcept ImportError as e:\n    print('ImportError', e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(_package_root()))
    assert out.returncode == 0, out.stderr
    assert "ImportError" in out.stdout and "ray[serve]" in out.stdout


def test_router_class_subclasses_rays_request_router(monkeypatch):
    """With a (stand-in) ``ray.serve.request_router`` module importable, the
    lazily built class subclasses its RequestRouter and keeps the hooks."""
    import types
    import switchyard.ray as sray
    fake = types.ModuleType("ray.serve.request_router")
    fake.RequestRouter = RequestRouter
    for name, mod in (("ray", types.ModuleType("ray")), ("ray.serve", types.ModuleType("ray.serve")),
                      ("ray.serve.request_router", fake)):
        monkeypatch.setitem(sys.modules, name, mod)
    sray.request_router_class.cache_clear()
    try:
        cls = sray.SwitchyardRequestRouter
        assert issubclass(cls, RequestRouter) and issubclass(cls, SwitchyardRouterMixin)
        assert cls.__module__ == "switchyard.ray" and cls.__name__ == "SwitchyardRequestRouter"
        assert sray.SwitchyardRequestRouter is cls
        assert pickle.loads(pickle.dumps(cls)) is cls  # Ray ships the class by reference
        with pytest.raises(AttributeError):
            sray.NoSuchThing
    finally:
        sray.request_router_class.cache_clear()


def _package_root():
    from pathlib import Path
    return Path(__file__).resolve().parents[1]
