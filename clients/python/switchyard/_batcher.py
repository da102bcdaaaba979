"""The lifecycle reporters' queue: bounded, thread-safe, with delivery
accounting. It does no I/O; the blocking and asyncio reporters drive it."""

from __future__ import annotations

import collections
import dataclasses
import random
import threading
import time
from typing import List, Optional, Tuple

import grpc

from switchyard.errors import ClosedError
from switchyard.events import EventMethods, check_event

#: Server-side default limit of events per batch.
MAX_BATCH = 10000


@dataclasses.dataclass
class LifecycleStats:
    """What a lifecycle reporter did with its events. At all times
    ``reported == delivered + dropped + rejected + pending``."""

    #: Events accepted by report().
    reported: int = 0
    #: Events in batches the server acknowledged.
    delivered: int = 0
    #: Events discarded unsent: the oldest when the buffer overflowed, and
    #: those still queued when close() gave up.
    dropped: int = 0
    #: Events in batches the server refused as invalid.
    rejected: int = 0
    #: Events sent again after a failed batch (the router ignores repeats).
    resent: int = 0
    #: Events held now (queued or in flight).
    pending: int = 0
    #: Batches that failed (server down, timeout, ...).
    failures: int = 0
    #: The server's counts over the acknowledged batches.
    applied: int = 0
    unknown_request: int = 0
    unknown_replica: int = 0
    stale: int = 0


class Batcher:
    """Events waiting to be sent, oldest first, at most ``buffer_size`` of
    them; ``cond`` guards everything and is notified when events arrive or
    settle."""

    def __init__(self, *, batch_size: int, buffer_size: int, flush_interval: float,
                 backoff: Tuple[float, float]):
        if not 1 <= batch_size <= MAX_BATCH:
            raise ValueError(f"batch_size {batch_size}: want 1..{MAX_BATCH}")
        if buffer_size < batch_size:
            raise ValueError(f"buffer_size {buffer_size}: want at least batch_size {batch_size}")
        if flush_interval <= 0:
            raise ValueError(f"flush_interval {flush_interval}: want > 0")
        if not 0 < backoff[0] <= backoff[1]:
            raise ValueError(f"backoff {backoff}: want 0 < min <= max")
        self.batch_size, self.buffer_size, self.flush_interval, self.backoff = (
            batch_size, buffer_size, flush_interval, backoff)
        self.cond = threading.Condition()
        self._pending = collections.deque()  # (seq, queued_at, event)
        self._inflight: List[tuple] = []
        self._seq = 0
        self._stats = LifecycleStats()
        self.closed = False
        self.flushers = 0

    def add(self, event) -> None:
        """Queue one event; the oldest is dropped (and counted) when full."""
        check_event(event)
        with self.cond:
            if self.closed:
                raise ClosedError("report", "the lifecycle reporter is closed")
            self._seq += 1
            self._stats.reported += 1
            if len(self._pending) >= self.buffer_size:
                self._pending.popleft()
                self._stats.dropped += 1
            self._pending.append((self._seq, time.monotonic(), event))
            self.cond.notify_all()

    def take(self, urgent: bool) -> Tuple[Optional[list], Optional[float]]:
        """The next batch to send, or (None, seconds to wait; None = until
        notified). Caller holds ``cond``."""
        n = len(self._pending)
        if n == 0:
            return None, None
        if n < self.batch_size and not urgent:
            wait = self._pending[0][1] + self.flush_interval - time.monotonic()
            if wait > 0:
                return None, wait
        self._inflight = [self._pending.popleft() for _ in range(min(n, self.batch_size))]
        return [item[2] for item in self._inflight], None

    def delivered(self, counts) -> None:
        """The in-flight batch was acknowledged with ``counts``."""
        with self.cond:
            s = self._stats
            s.delivered += len(self._inflight)
            s.applied += counts.applied
            s.unknown_request += counts.unknown_request
            s.unknown_replica += counts.unknown_replica
            s.stale += counts.stale
            self._inflight = []
            self.cond.notify_all()

    def failed(self, code: Optional[grpc.StatusCode], fails: int) -> float:
        """The in-flight batch failed; returns how long to back off (0 when
        the server rejected it as invalid: it is dropped, not retried)."""
        with self.cond:
            s = self._stats
            s.failures += 1
            batch, self._inflight = self._inflight, []
            if code == grpc.StatusCode.INVALID_ARGUMENT:
                s.rejected += len(batch)
                self.cond.notify_all()
                return 0.0
            room = self.buffer_size - len(self._pending)
            keep = batch[max(0, len(batch) - room):]  # no room: the oldest go
            s.dropped += len(batch) - len(keep)
            s.resent += len(keep)
            self._pending.extendleft(reversed(keep))
            self.cond.notify_all()
        lo, hi = self.backoff
        d = min(hi, lo * 2 ** min(fails - 1, 30))
        return random.uniform(d / 2, d)

    def settled(self, seq: int) -> bool:
        """Whether every event up to ``seq`` has settled. Caller holds cond."""
        oldest = self._inflight[0] if self._inflight else (self._pending[0] if self._pending else None)
        return oldest is None or oldest[0] > seq

    def last_seq(self) -> int:
        """The sequence number of the last event added. Caller holds cond."""
        return self._seq

    def held(self) -> int:
        """Events queued or in flight. Caller holds cond."""
        return len(self._pending) + len(self._inflight)

    def drop_all(self) -> int:
        """Count everything still held as dropped; returns how many."""
        with self.cond:
            n = self.held()
            self._pending.clear()
            self._inflight = []
            self._stats.dropped += n
            self.cond.notify_all()
            return n

    def stats(self) -> LifecycleStats:
        """A snapshot of the counters."""
        with self.cond:
            return dataclasses.replace(self._stats, pending=self.held())


class ReporterBase(EventMethods):
    """What both lifecycle reporters share: the options, the queue and the
    counters. Subclasses drive the sending."""

    def __init__(self, stub, *, timeout: float, batch_size: int = 256, buffer_size: int = 65536,
                 flush_interval: float = 0.005, backoff: Tuple[float, float] = (0.05, 5.0)):
        self._stub = stub
        self._timeout = timeout
        self._b = Batcher(batch_size=batch_size, buffer_size=buffer_size, flush_interval=flush_interval,
                          backoff=backoff)

    def report(self, event) -> None:
        """Queue a LifecycleEvent (see ``switchyard.events``); never blocks.
        Raises InvalidArgumentError for an event the server would refuse and
        ClosedError after close()."""
        self._b.add(event)

    @property
    def stats(self) -> LifecycleStats:
        """A snapshot of the reporter's counters."""
        return self._b.stats()
