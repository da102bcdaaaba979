"""Lifecycle events: what a data plane reports about a request after picking.

Each helper returns a ``switchyard.v1.router_pb2.LifecycleEvent`` stamped with
the current time. ``check_event`` applies the server's per-event rules on the
client, so a bad event is refused where it is made rather than failing the
batch it would travel in.
"""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from switchyard.errors import InvalidArgumentError
from switchyard.v1 import router_pb2

#: The longest request or replica id the server accepts by default.
MAX_ID_BYTES = 256

#: Completion statuses by name, for ``done(status=...)``.
STATUSES = {
    "ok": router_pb2.COMPLETION_STATUS_OK,
    "error": router_pb2.COMPLETION_STATUS_ERROR,
    "cancelled": router_pb2.COMPLETION_STATUS_CANCELLED,
}


def _event(request_id: str, replica_id: str, **kind) -> router_pb2.LifecycleEvent:
    ts = Timestamp()
    ts.GetCurrentTime()
    ev = router_pb2.LifecycleEvent(request_id=request_id, replica_id=replica_id, time=ts, **kind)
    check_event(ev)
    return ev


def admitted(request_id: str, replica_id: str = "", prompt_tokens: int = 0, cached_tokens: int = 0):
    """The engine accepted the request. ``replica_id`` may differ from the
    picked replica when the data plane overrode the choice; token counts of 0
    keep the router's estimates."""
    return _event(request_id, replica_id, admitted=router_pb2.RequestAdmitted(
        prompt_tokens=prompt_tokens, cached_tokens=cached_tokens))


def first_token(request_id: str, replica_id: str = ""):
    """The first output token was produced: the request's prefill is over."""
    return _event(request_id, replica_id, first_token=router_pb2.FirstTokenEmitted())


def progress(request_id: str, replica_id: str = "", generated_tokens: int = 0):
    """Output tokens generated so far (cumulative)."""
    return _event(request_id, replica_id, progress=router_pb2.RequestProgress(generated_tokens=generated_tokens))


def done(request_id: str, replica_id: str = "", output_tokens: int = 0, cached_prompt_tokens: int = 0,
         status: str = "ok"):
    """The request ended (``status`` "ok", "error" or "cancelled"); all its
    load is freed."""
    if status not in STATUSES:
        raise InvalidArgumentError("done", f"status: want one of {sorted(STATUSES)}, got {status!r}")
    return _event(request_id, replica_id, done=router_pb2.RequestDone(
        output_tokens=output_tokens, cached_prompt_tokens=cached_prompt_tokens, status=STATUSES[status]))


def check_event(ev) -> None:
    """Raise InvalidArgumentError naming the field if the server would refuse
    ``ev``."""
    def bad(field, why):
        raise InvalidArgumentError("LifecycleEvent", f"{field}: {why}")

    if not isinstance(ev, router_pb2.LifecycleEvent):
        bad("event", f"want a LifecycleEvent, got {type(ev).__name__}")
    if not ev.request_id:
        bad("request_id", "required")
    for field in ("request_id", "replica_id"):
        n = len(getattr(ev, field).encode())
        if n > MAX_ID_BYTES:
            bad(field, f"{n} bytes exceed {MAX_ID_BYTES}")
    kind = ev.WhichOneof("event")
    if kind is None:
        bad("event", "set one of admitted, first_token, progress or done")
    fields = {"admitted": ("prompt_tokens", "cached_tokens"), "progress": ("generated_tokens",),
              "done": ("output_tokens", "cached_prompt_tokens"), "first_token": ()}[kind]
    for f in fields:
        if getattr(getattr(ev, kind), f) < 0:
            bad(f"{kind}.{f}", f"must not be negative, got {getattr(getattr(ev, kind), f)}")
    if kind == "done" and ev.done.status not in router_pb2.CompletionStatus.values():
        bad("done.status", f"unknown status {ev.done.status}")


class EventMethods:
    """Shorthands that build an event and ``report`` it, for classes that
    define ``report(event)``."""

    def admitted(self, request_id: str, replica_id: str = "", prompt_tokens: int = 0, cached_tokens: int = 0):
        """Report that the engine accepted the request."""
        self.report(admitted(request_id, replica_id, prompt_tokens, cached_tokens))

    def first_token(self, request_id: str, replica_id: str = ""):
        """Report the request's first output token."""
        self.report(first_token(request_id, replica_id))

    def progress(self, request_id: str, replica_id: str = "", generated_tokens: int = 0):
        """Report the output tokens generated so far."""
        self.report(progress(request_id, replica_id, generated_tokens))

    def done(self, request_id: str, replica_id: str = "", output_tokens: int = 0, cached_prompt_tokens: int = 0,
             status: str = "ok"):
        """Report that the request ended."""
        self.report(done(request_id, replica_id, output_tokens, cached_prompt_tokens, status))
