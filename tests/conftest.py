"""Shared fixtures: a real spawned `promptd serve` and an in-process caller."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "protocol" / "vectors"
# The repository's build tools (scripts/generate.py): the tests check that generated files are current.
sys.path.insert(0, str(ROOT / "scripts"))
# promptd as hosts and users run it: the console script installed beside the interpreter
# (`python -m promptd` also pays runpy's own start, about 20 ms a spawn; test_versions covers it).
_SCRIPT = Path(sys.executable).with_name("promptd")
PROMPTD = [str(_SCRIPT)] if os.access(_SCRIPT, os.X_OK) else [sys.executable, "-m", "promptd"]
# The compiled-template cache of every promptd the tests run (in-process and spawned) goes to a
# folder of this run, not the user's own cache.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="promptd-test-cache-")


def run_cli(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None, cwd: Any = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """One promptd command as a user runs it: warnings-only logs, no vault key taken from the
    developer's own environment, `env` on top."""
    full_env = dict(os.environ, PROMPTD_LOG_LEVEL="warning")
    full_env.pop("PROMPTD_VAULT_KEY", None)
    full_env.update(env or {})
    return subprocess.run([*PROMPTD, *args], capture_output=True, env=full_env, cwd=cwd, input=stdin, timeout=timeout)


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
            argv or [*PROMPTD, *args, "serve"],
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

    def settled(self, timeout: float = 10.0) -> bool:
        """True when the server is alive and a fresh request's reply is the next frame it sends:
        nothing left unread, nothing still in flight. A server shared between tests is handed on
        only when this holds."""
        if self.proc.poll() is not None:
            return False
        marker = f"settle-{os.getpid()}-{id(self)}-{self._next_id}"
        self._next_id += 1
        try:
            self.send({"jsonrpc": "2.0", "id": marker, "method": "reminder/keys"})
            reply = self.read(timeout)
        except (OSError, ValueError, TimeoutError, EOFError):
            return False
        return isinstance(reply, dict) and reply.get("id") == marker and "result" in reply and not self._buffer

    def close(self, timeout: float = 10.0) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass  # the server already ended (a test closed its stdout, for one)
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


def _key(args: tuple[str, ...], env: dict[str, str] | None, test_methods: bool, tag: str) -> tuple[Any, ...]:
    return (args, tuple(sorted((env or {}).items())), test_methods, tag)


@pytest.fixture(scope="module")
def _module_servers() -> Iterator[dict[tuple[Any, ...], Served]]:
    """The servers `shared_spawn` hands out, one per configuration, closed with the module."""
    pool: dict[tuple[Any, ...], Served] = {}
    yield pool
    for server in pool.values():
        server.close()


@pytest.fixture
def shared_spawn(_module_servers: dict[tuple[Any, ...], Served]) -> Iterator[Any]:
    """Factory for a server shared by the test module's stateless wire checks, one per set of
    arguments / environment (started on first use).

    Only for tests that leave no state behind that another test could see: no `initialize`
    (but see `tag`), `shutdown`/`exit`, `providers/register`, config change, subscription or
    stderr reading, and a session id of the test's own where a method keeps per-session state. Such tests take
    `served`/`spawn`, a process of their own. After each test the server must answer a fresh
    request with nothing else unread or in flight; otherwise it is closed and the next test
    gets a new one, so a failing test cannot leak frames into the next.

    `tag` names servers that differ only in what the tests do to them once (e.g. initialize with
    some offset unit): every test taking that tag wants the same set-up, and the caller does it
    when the server is new (a fresh `Served` has none of the caller's attributes)."""
    used: list[tuple[tuple[Any, ...], Served]] = []

    def make(*args: str, env: dict[str, str] | None = None, test_methods: bool = False, tag: str = "") -> Served:
        key = _key(args, env, test_methods, tag)
        server = _module_servers.get(key)
        if server is None or server.proc.poll() is not None:
            server = _module_servers[key] = Served(*args, env=env, argv=TEST_SERVER if test_methods else None)
            # Handed out once it answers: a test timing its requests never times the start.
            assert server.settled(timeout=30.0), server.stderr_text()
        used.append((key, server))
        return server

    yield make
    for key, server in used:
        if _module_servers.get(key) is server and not server.settled():
            del _module_servers[key]
            server.close(timeout=2.0)


@pytest.fixture
def shared_served(shared_spawn: Any) -> Served:
    """A plain `promptd serve` shared by the module's stateless wire checks (see `shared_spawn`)."""
    return shared_spawn()


@pytest.fixture
def shared_testserver(shared_spawn: Any) -> Served:
    """`testserver`'s test methods on a server shared by the module's stateless checks."""
    return shared_spawn(test_methods=True)


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
