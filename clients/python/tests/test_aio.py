"""The asyncio client against the real server, under concurrency."""

from __future__ import annotations

import asyncio

import pytest

import switchyard


def run(coro):
    return asyncio.run(coro)


def test_hundred_concurrent_picks_then_lifecycle(server):
    async def main():
        async with switchyard.AsyncSwitchyardClient(server.addr, timeout=10) as c:
            for i in range(4):
                await c.register_replica(f"vllm-{i}", "m")
            picks = await asyncio.gather(*(
                c.pick("m", request_id=f"r{i}", token_ids=[i * 1000 + t for t in range(64)], session_id=f"s{i % 7}")
                for i in range(100)))
            assert len({p.decision_id for p in picks}) == 100
            load = {r.replica.id: r.load.active_requests for r in await c.list_replicas("m")}
            assert sum(load.values()) == 100
            assert min(load.values()) > 0, f"token-load policy left a replica idle: {load}"

            reporter = c.lifecycle(batch_size=32)
            for i, p in enumerate(picks):
                reporter.admitted(f"r{i}", p.replica_id)
                reporter.done(f"r{i}", p.replica_id, output_tokens=10)
            assert await reporter.flush(timeout=10)
            st = reporter.stats
            assert (st.delivered, st.applied, st.dropped, st.pending) == (200, 200, 0, 0)
            assert sum(r.load.active_requests for r in await c.list_replicas("m")) == 0
            assert await reporter.close()
    run(main())


def test_async_errors(server, dead_addr):
    async def main():
        async with switchyard.AsyncSwitchyardClient(server.addr) as c:
            with pytest.raises(switchyard.NotFoundError, match="PickReplica"):
                await c.pick("nope", text="x")
            with pytest.raises(switchyard.InvalidArgumentError, match="prompt"):
                await c.pick("m")
        with pytest.raises(switchyard.ClosedError):
            await c.list_replicas()
        async with switchyard.AsyncSwitchyardClient(dead_addr, timeout=2) as down:
            with pytest.raises(switchyard.UnavailableError):
                await down.register_replica("a", "m")
    run(main())


def test_async_reporter_survives_restart_and_close_counts(server):
    fast = [("grpc.dns_min_time_between_resolutions_ms", 20), ("grpc.initial_reconnect_backoff_ms", 20),
            ("grpc.max_reconnect_backoff_ms", 100)]

    async def main():
        async with switchyard.AsyncSwitchyardClient(server.addr, timeout=2, options=fast) as c:
            reporter = c.lifecycle(batch_size=10, buffer_size=40, backoff=(0.01, 0.1))
            server.kill()
            for i in range(100):
                reporter.progress(f"r{i}", "a", generated_tokens=i)
            assert not await reporter.flush(timeout=0.3)
            assert reporter.stats.failures >= 1
            await asyncio.get_running_loop().run_in_executor(None, server.restart)
            assert await reporter.flush(timeout=20)
            st = reporter.stats
            assert (st.reported, st.delivered, st.dropped, st.unknown_request) == (100, 40, 60, 40)

            server.kill()
            reporter.first_token("late")
            assert await reporter.close(timeout=0.2) is False
            st = reporter.stats
            assert (st.reported, st.delivered, st.dropped, st.pending) == (101, 40, 61, 0)
    run(main())
