"""The blocking client's lifecycle reporter: a background thread that sends
queued events in batches (ReportLifecycle), retrying with backoff."""

from __future__ import annotations

import logging
import threading
import time
from typing import Optional

import grpc

from switchyard._batcher import LifecycleStats, ReporterBase
from switchyard.v1 import router_pb2

__all__ = ["LifecycleReporter", "LifecycleStats"]

log = logging.getLogger("switchyard")


class LifecycleReporter(ReporterBase):
    """Queues lifecycle events and sends them in batches from a background
    thread. ``report`` and the event methods never block and may be called
    from any thread. A batch leaves when it is full or its oldest event has
    waited ``flush_interval`` seconds. Failed batches are retried with
    exponential backoff (delivery is at least once; the router ignores
    repeats); batches the server calls invalid are dropped. The queue holds
    at most ``buffer_size`` events: on overflow the oldest is dropped and
    counted. Create it with ``SwitchyardClient.lifecycle()``."""

    def __init__(self, stub, *, timeout: float, **options):
        super().__init__(stub, timeout=timeout, **options)
        self._stop = False  # give up at once (close timed out)
        self._thread = threading.Thread(target=self._run, name="switchyard-lifecycle", daemon=True)
        self._thread.start()

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Send everything reported so far and wait until the server has
        acknowledged it (or it was dropped or rejected). Returns False if
        ``timeout`` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._b.cond:
            target = self._b.last_seq()
            self._b.flushers += 1
            self._b.cond.notify_all()
            try:
                while not self._b.settled(target):
                    left = None if deadline is None else deadline - time.monotonic()
                    if (left is not None and left <= 0) or not self._thread.is_alive():
                        return False
                    self._b.cond.wait(left)
                return True
            finally:
                self._b.flushers -= 1

    def close(self, timeout: Optional[float] = 5.0) -> bool:
        """Stop accepting events, send what is queued, and stop the thread.
        Whatever is still queued after ``timeout`` seconds is dropped and
        counted; returns False in that case."""
        with self._b.cond:
            if self._b.closed:
                return self._b.held() == 0
            self._b.closed = True
            self._b.cond.notify_all()
        self._thread.join(timeout)
        if self._thread.is_alive():
            with self._b.cond:
                self._stop = True
                self._b.cond.notify_all()
            self._thread.join()
        return self._b.drop_all() == 0

    def _run(self) -> None:
        fails = 0
        while True:
            with self._b.cond:
                while True:
                    if self._stop:
                        return
                    batch, wait = self._b.take(urgent=self._b.flushers > 0 or self._b.closed)
                    if batch is not None:
                        break
                    if self._b.closed and self._b.held() == 0:
                        return
                    self._b.cond.wait(wait)
            try:
                resp = self._stub.ReportLifecycle(router_pb2.ReportLifecycleRequest(events=batch),
                                                  timeout=self._timeout)
            except grpc.RpcError as err:
                fails += 1
                delay = self._b.failed(err.code(), fails)
                if delay == 0:
                    log.error("switchyard: lifecycle batch rejected, %d events dropped: %s", len(batch), err.details())
                    continue
                log.warning("switchyard: lifecycle batch failed (%s); retrying in %.3fs", err.code(), delay)
                with self._b.cond:
                    self._b.cond.wait_for(lambda: self._stop, delay)
                continue
            fails = 0
            self._b.delivered(resp.counts)
