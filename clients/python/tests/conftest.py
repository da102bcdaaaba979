"""Fixtures that run the real switchyard server binary.

The binary is taken from $SWITCHYARD_BIN, or built once per session with
``go build`` from the repository this package sits in.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def switchyard_bin(tmp_path_factory) -> str:
    """Path of the server binary."""
    if os.environ.get("SWITCHYARD_BIN"):
        return os.environ["SWITCHYARD_BIN"]
    out = tmp_path_factory.mktemp("bin") / "switchyard"
    built = subprocess.run(["go", "build", "-o", str(out), "./cmd/switchyard"], cwd=REPO,
                           capture_output=True, text=True)
    if built.returncode != 0:
        pytest.fail(f"go build ./cmd/switchyard failed:\n{built.stderr}", pytrace=False)
    return str(out)


class Server:
    """One switchyard server process on a loopback port."""

    def __init__(self, binary: str):
        self.binary = binary
        self.addr = ""
        self.proc = None

    def start(self, listen: str = "127.0.0.1:0") -> "Server":
        """Start the server (on ``listen``) and wait for its start-up log line."""
        self.proc = subprocess.Popen(
            [self.binary, "serve", "--listen", listen, "--log-format", "json", "--seed", "1"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines: "queue.Queue[str]" = queue.Queue()
        threading.Thread(target=self._drain, args=(self.proc.stderr, lines), daemon=True).start()
        seen = []
        while True:
            try:
                line = lines.get(timeout=20)
            except queue.Empty:
                self.kill()
                raise RuntimeError(f"switchyard did not report its address within 20 s: {seen}")
            if line is None:
                raise RuntimeError(f"switchyard exited with {self.proc.wait()}: {seen}")
            seen.append(line)
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("msg") == "switchyard serving":
                self.addr = record["addr"]
                return self

    @staticmethod
    def _drain(stream, lines) -> None:
        for line in stream:
            lines.put(line)
        lines.put(None)

    def kill(self) -> None:
        """SIGKILL the server (no graceful shutdown) and reap it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def restart(self) -> None:
        """Start a fresh process on the same address."""
        self.kill()
        self.start(self.addr)

    def stop(self) -> None:
        """Terminate gracefully, killing after 5 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def server(switchyard_bin):
    """A fresh server for one test."""
    s = Server(switchyard_bin).start()
    yield s
    s.kill()  # no need to wait for a graceful shutdown


@pytest.fixture
def dead_addr() -> str:
    """An address nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


@pytest.fixture
def silent_addr():
    """An address that accepts TCP connections but never answers (a hung
    server)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield "127.0.0.1:%d" % s.getsockname()[1]
