"""The blocking client and its lifecycle reporter against the real server."""

from __future__ import annotations

import grpc
import pytest

import switchyard
from switchyard import events


#: Channel options for tests that restart the server.
FAST_RECONNECT = [("grpc.dns_min_time_between_resolutions_ms", 20), ("grpc.initial_reconnect_backoff_ms", 20),
                  ("grpc.max_reconnect_backoff_ms", 100)]


def tokens(n, seed=0):
    return [seed * 7919 + i for i in range(n)]


@pytest.fixture
def client(server):
    with switchyard.SwitchyardClient(server.addr, timeout=5) as c:
        for rid in ("a", "b"):
            c.register_replica(rid, "m", address=f"{rid}:8000", kv_blocks=1000, labels={"zone": "z1"})
        yield c


def active(client, model="m"):
    return sum(r.load.active_requests for r in client.list_replicas(model))


def test_pick_report_and_list(client):
    first = client.pick("m", request_id="r1", token_ids=tokens(64))
    assert first.replica_id in ("a", "b")
    assert list(first.fallbacks) == [{"a": "b", "b": "a"}[first.replica_id]]
    assert first.prompt_tokens == 64 and first.replica_address == first.replica_id + ":8000"
    assert active(client) == 1

    counts = client.report([events.admitted("r1", first.replica_id, prompt_tokens=64),
                            events.first_token("r1", first.replica_id),
                            events.done("r1", first.replica_id, output_tokens=20)])
    assert (counts.applied, counts.unknown_request) == (3, 0)
    assert active(client) == 0

    # The first decision's predicted blocks make its replica the better one.
    second = client.pick("m", request_id="r2", token_ids=tokens(64), session_id="s1", expected_output_tokens=10)
    assert (second.replica_id, second.cached_tokens) == (first.replica_id, 64)
    dry = client.pick("m", text="hello", dry_run=True, candidates=["b"])
    assert dry.dry_run and dry.replica_id == "b" and dry.decision_id

    listed = {r.replica.id: r for r in client.list_replicas("m")}
    assert set(listed) == {"a", "b"} and listed["a"].replica.labels["zone"] == "z1"
    assert client.set_replica_state("a", "draining").replica.state == switchyard.v1.replica_pb2.REPLICA_STATE_DRAINING
    assert client.pick("m", text="x", dry_run=True).replica_id == "b"
    client.deregister_replica("a")
    assert [r.replica.id for r in client.list_replicas()] == ["b"]


@pytest.mark.parametrize("call, error, mention", [
    (lambda c: c.pick("m", request_id="r"), switchyard.InvalidArgumentError, "prompt"),
    (lambda c: c.pick("m", text="x", token_ids=[1]), switchyard.InvalidArgumentError, "exactly one"),
    (lambda c: c.pick("m", text="x", expected_output_tokens=-1), switchyard.InvalidArgumentError, "expected_output_tokens"),
    (lambda c: c.pick("nope", text="x"), switchyard.NotFoundError, "nope"),
    (lambda c: c.deregister_replica("nobody"), switchyard.NotFoundError, "DeregisterReplica"),
    (lambda c: c.register_replica("a", "other"), switchyard.ConflictError, "RegisterReplica"),
    (lambda c: c.set_replica_state("a", "sleeping"), switchyard.InvalidArgumentError, "state"),
    (lambda c: (c.set_replica_state("a", "draining"), c.set_replica_state("b", "draining"), c.pick("m", text="x")),
     switchyard.UnavailableError, "PickReplica"),
    (lambda c: events.progress("r", "a", -1), switchyard.InvalidArgumentError, "progress.generated_tokens"),
    (lambda c: events.done("r", "a", status="fine"), switchyard.InvalidArgumentError, "status"),
    (lambda c: events.first_token("", "a"), switchyard.InvalidArgumentError, "request_id"),
    (lambda c: events.first_token("r" * 257), switchyard.InvalidArgumentError, "request_id"),
])
def test_errors(client, call, error, mention):
    with pytest.raises(error, match=mention):
        call(client)


def test_error_carries_code_and_builtin_base(client):
    with pytest.raises(LookupError) as info:
        client.pick("nope", text="x")
    assert info.value.code == grpc.StatusCode.NOT_FOUND and info.value.op == "PickReplica"


def test_unreachable_server_and_closed_client(dead_addr):
    c = switchyard.SwitchyardClient(dead_addr, timeout=2)
    with pytest.raises(switchyard.UnavailableError) as info:
        c.list_replicas()
    assert isinstance(info.value, ConnectionError)
    c.close()
    with pytest.raises(switchyard.ClosedError):
        c.pick("m", text="x")
    with pytest.raises(ValueError, match="target"):
        switchyard.SwitchyardClient()


def test_hung_server_times_out(silent_addr):
    with switchyard.SwitchyardClient(silent_addr, timeout=0.2) as c:
        with pytest.raises(switchyard.DeadlineExceededError, match="ListReplicas") as info:
            c.list_replicas()
        assert isinstance(info.value, TimeoutError)


def test_lifecycle_reporter_batches_and_frees_load(client):
    reporter = client.lifecycle(batch_size=16, flush_interval=60)  # only full batches or flush send
    picks = [client.pick("m", request_id=f"q{i}", token_ids=tokens(32, i)) for i in range(40)]
    assert active(client) == 40
    for i, p in enumerate(picks):
        reporter.admitted(f"q{i}", p.replica_id, prompt_tokens=32)
        reporter.first_token(f"q{i}", p.replica_id)
        reporter.progress(f"q{i}", p.replica_id, generated_tokens=3)
        reporter.done(f"q{i}", p.replica_id, output_tokens=5)
    assert reporter.flush(timeout=10)
    st = reporter.stats
    assert (st.reported, st.delivered, st.applied, st.dropped, st.pending) == (160, 160, 160, 0, 0)
    assert active(client) == 0
    assert reporter.close()
    with pytest.raises(switchyard.ClosedError):
        reporter.first_token("late")


def test_lifecycle_reporter_survives_server_restart(server):
    """Events reported while the server is down wait in the bounded buffer
    (the overflow is counted) and are delivered once it is back."""
    c = switchyard.SwitchyardClient(server.addr, timeout=2, options=FAST_RECONNECT)
    reporter = c.lifecycle(batch_size=10, buffer_size=50, backoff=(0.01, 0.1))
    server.kill()
    for i in range(80):
        reporter.first_token(f"r{i}")
    assert not reporter.flush(timeout=0.5)  # nothing can be delivered yet
    down = reporter.stats
    assert down.failures >= 1 and down.delivered == 0
    server.restart()
    assert reporter.flush(timeout=20)
    st = reporter.stats
    assert (st.reported, st.delivered, st.dropped, st.pending) == (80, 50, 30, 0)
    assert st.unknown_request == 50  # a fresh server knows none of them
    assert reporter.close()
    c.close()


def test_lifecycle_close_gives_up_and_counts(dead_addr):
    c = switchyard.SwitchyardClient(dead_addr, timeout=1)
    reporter = c.lifecycle(backoff=(0.01, 0.05))
    for i in range(7):
        reporter.done(f"r{i}")
    assert reporter.close(timeout=0.3) is False
    st = reporter.stats
    assert (st.reported, st.dropped, st.pending, st.delivered) == (7, 7, 0, 0)
    c.close()


@pytest.mark.parametrize("options, mention", [
    (dict(batch_size=0), "batch_size"),
    (dict(batch_size=20000), "batch_size"),
    (dict(buffer_size=1, batch_size=2), "buffer_size"),
    (dict(flush_interval=0), "flush_interval"),
    (dict(backoff=(1, 0.5)), "backoff"),
])
def test_lifecycle_rejects_bad_options(client, options, mention):
    with pytest.raises(ValueError, match=mention):
        client.lifecycle(**options)
