"""Shared fixtures: a real spawned `promptd serve` and an in-process caller."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import tempfile
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "protocol" / "vectors"


class Served:
    """A spawned `promptd serve` spoken to line by line."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, argv: list[str] | None = None) -> None:
        # A file, not a pipe: a chatty server can never block on a full stderr pipe.
        self._stderr = tempfile.TemporaryFile()
        full_env = dict(os.environ)
        full_env.setdefault("PROMPTD_LOG_LEVEL", "warning")
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen(
            argv or [sys.executable, "-m", "promptd", *args, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=full_env,
        )
        self._next_id = 0
        self._buffer = b""

    # -- raw access --------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, frame: Any) -> None:
        self.send_raw(json.dumps(frame).encode() + b"\n")

    def read_line(self, timeout: float = 10.0) -> bytes:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise TimeoutError("no frame from promptd within the timeout")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise EOFError("promptd closed its stdout")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def read(self, timeout: float = 10.0) -> Any:
        return json.loads(self.read_line(timeout))

    def nothing_within(self, seconds: float) -> bool:
        """True when no frame arrives within `seconds`."""
        try:
            self.read_line(seconds)
        except TimeoutError:
            return True
        return False

    # -- requests ----------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, timeout: float = 10.0) -> Any:
        """Sends one request and returns its reply frame (result or error), skipping other frames
        such as event notifications."""
        self._next_id += 1
        ident = self._next_id
        frame: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
        if params is not None:
            frame["params"] = params
        self.send(frame)
        while True:
            reply = self.read(timeout)
            if isinstance(reply, dict) and reply.get("id") == ident and "method" not in reply:
                return reply

    def call(self, method: str, params: Any = None, timeout: float = 10.0) -> Any:
        """The result of a request, failing the test on an error reply."""
        reply = self.request(method, params, timeout)
        assert "error" not in reply, reply
        return reply["result"]

    def close(self, timeout: float = 10.0) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            if self.proc.stdout:
                self.proc.stdout.close()

    def stderr_text(self) -> str:
        """Everything the server wrote to stderr so far."""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")


@pytest.fixture
def served() -> Iterator[Served]:
    server = Served()
    try:
        yield server
    finally:
        server.close()


TEST_SERVER = [sys.executable, str(ROOT / "tests" / "support" / "serve_with_test_methods.py")]


@pytest.fixture
def testserver() -> Iterator[Served]:
    """The real transport with test-only methods (test/sleep, test/noisy, test/explode,
    test/ask_client) added to the table."""
    server = Served(argv=TEST_SERVER)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def spawn() -> Iterator[Any]:
    """Factory for servers with their own arguments or environment; all closed at the end."""
    started: list[Served] = []

    def make(*args: str, env: dict[str, str] | None = None, test_methods: bool = False) -> Served:
        server = Served(*args, env=env, argv=TEST_SERVER if test_methods else None)
        started.append(server)
        return server

    yield make
    for server in started:
        server.close()


def call_in_process(method: str, params: dict[str, Any] | None = None, runtime: Any = None) -> dict[str, Any]:
    """Runs one method through the in-process door (the server's method table and boundary);
    raises LocalError, an RpcFailure, on error."""
    from promptd.local import Local

    return Local(runtime=runtime).call(method, params or {})
