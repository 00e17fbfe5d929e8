"""Shared fixtures: a promptd server spoken to over pipes (in a thread here, a spawned process in
tests/wire/), the CLI as a user runs it, and an in-process caller."""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import tempfile
import threading
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
# `promptd serve` with the test-only methods (tests/support/test_methods.py) in its table.
TEST_SERVER = [sys.executable, str(ROOT / "tests" / "support" / "serve_with_test_methods.py")]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """`make test-python`'s second run (`-m serial`) imports only the test files that mark a test
    serial (every such file spells `pytest.mark.serial`): importing the other hundred files to
    deselect all their tests cost as long as the serial tests themselves took to run."""
    if config.option.markexpr != "serial" or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return "pytest.mark.serial" not in collection_path.read_text(encoding="utf-8")


def run_cli(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None, cwd: Any = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    """One promptd command as a user runs it: warnings-only logs, no vault key taken from the
    developer's own environment, `env` on top."""
    full_env = dict(os.environ, PROMPTD_LOG_LEVEL="warning")
    full_env.pop("PROMPTD_VAULT_KEY", None)
    full_env.update(env or {})
    return subprocess.run([*PROMPTD, *args], capture_output=True, env=full_env, cwd=cwd, input=stdin, timeout=timeout)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]) -> Any:
    """`run_cli` in this process: `promptd.cli.main.main(argv)` with the same environment rules
    (warnings-only logs, no vault key of the developer's, `env` on top), `stdin` as its input and
    `cwd` as its folder; returns a CompletedProcess with the exit status and the bytes written."""

    def run(*args: str, env: dict[str, str] | None = None, stdin: bytes | None = None, cwd: Any = None) -> subprocess.CompletedProcess[bytes]:
        from promptd.cli.main import main

        with monkeypatch.context() as patch:
            patch.setenv("PROMPTD_LOG_LEVEL", "warning")
            patch.delenv("PROMPTD_VAULT_KEY", raising=False)
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            if cwd is not None:
                patch.chdir(cwd)
            patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8"))
            capsysbinary.readouterr()
            try:
                status = main(list(args))
            except SystemExit as exit:
                status = exit.code if isinstance(exit.code, int) else 1
            out, err = capsysbinary.readouterr()
        return subprocess.CompletedProcess(["promptd", *args], status, out, err)

    return run


# A spawned or in-thread server answers within this unless it hangs: generous, so a loaded machine
# never fails a test that waits for a frame (docs: a spawned test never waits on a short timeout).
WAIT_S = 60.0


class Channel:
    """A promptd server spoken to line by line over a pipe pair; `Served` spawns the process,
    `Threaded` runs the same transport in a thread of the test's own process."""

    def __init__(self, write_fd: int, read_fd: int) -> None:
        self._write_fd: int | None = write_fd
        self._read_fd = read_fd
        self._next_id = 0
        self._buffer = b""

    # -- what a subclass provides -------------------------------------------------------------
    def alive(self) -> bool:
        raise NotImplementedError

    def wait(self, timeout: float = WAIT_S) -> int:
        """The exit status, once the server has ended (TimeoutError if it has not by then)."""
        raise NotImplementedError

    def stderr_text(self) -> str:
        """Everything the server logged so far."""
        raise NotImplementedError

    # -- raw access --------------------------------------------------------------------------
    def send_raw(self, data: bytes) -> None:
        assert self._write_fd is not None, "the input is closed"
        view = memoryview(data)
        while view:
            view = view[os.write(self._write_fd, view) :]

    def send(self, frame: Any) -> None:
        self.send_raw(json.dumps(frame).encode() + b"\n")

    def close_input(self) -> None:
        """Ends the server's input, as a host closing its end of the pipe."""
        if self._write_fd is not None:
            fd, self._write_fd = self._write_fd, None
            os.close(fd)

    def close_output(self) -> None:
        """Closes the test's end of the server's output, as a host that stops reading."""
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1

    def read_line(self, timeout: float = WAIT_S) -> bytes:
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([self._read_fd], [], [], timeout)
            if not ready:
                raise TimeoutError("no frame from promptd within the timeout")
            chunk = os.read(self._read_fd, 1 << 16)
            if not chunk:
                raise EOFError("promptd closed its stdout")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def read(self, timeout: float = WAIT_S) -> Any:
        return json.loads(self.read_line(timeout))

    def nothing_within(self, seconds: float) -> bool:
        """True when no frame arrives within `seconds`."""
        try:
            self.read_line(seconds)
        except TimeoutError:
            return True
        return False

    # -- requests ----------------------------------------------------------------------------
    def request(self, method: str, params: Any = None, timeout: float = WAIT_S) -> Any:
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

    def call(self, method: str, params: Any = None, timeout: float = WAIT_S) -> Any:
        """The result of a request, failing the test on an error reply."""
        reply = self.request(method, params, timeout)
        assert "error" not in reply, reply
        return reply["result"]

    def settled(self, timeout: float = WAIT_S) -> bool:
        """True when the server is alive and a fresh request's reply is the next frame it sends:
        nothing left unread, nothing still in flight. A server shared between tests is handed on
        only when this holds."""
        if not self.alive():
            return False
        marker = f"settle-{os.getpid()}-{id(self)}-{self._next_id}"
        self._next_id += 1
        try:
            self.send({"jsonrpc": "2.0", "id": marker, "method": "reminder/keys"})
            reply = self.read(timeout)
        except (OSError, ValueError, TimeoutError, EOFError):
            return False
        return isinstance(reply, dict) and reply.get("id") == marker and "result" in reply and not self._buffer

    def close(self, timeout: float = WAIT_S) -> int:
        """Ends the input and waits for the server to end; returns its exit status."""
        try:
            self.close_input()
        except OSError:
            pass  # the server already ended (a test closed its stdout, for one)
        try:
            return self.wait(timeout)
        finally:
            self._release()

    def _release(self) -> None:
        self.close_output()


class Served(Channel):
    """A spawned `promptd serve`: for what is about the process itself (signals, exit status,
    start-up, stdout protection, what its children inherit). Tests of those live in tests/wire/."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, argv: list[str] | None = None, test_methods: bool = False) -> None:
        # A file, not a pipe: a chatty server can never block on a full stderr pipe.
        self._stderr = tempfile.TemporaryFile()
        full_env = dict(os.environ)
        full_env.setdefault("PROMPTD_LOG_LEVEL", "warning")
        if env:
            full_env.update(env)
        self.proc = subprocess.Popen(
            argv or (TEST_SERVER if test_methods else [*PROMPTD, *args, "serve"]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=full_env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        super().__init__(os.dup(self.proc.stdin.fileno()), os.dup(self.proc.stdout.fileno()))
        self.proc.stdin.close()
        self.proc.stdout.close()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait(self, timeout: float = WAIT_S) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired as exc:
            raise TimeoutError(f"promptd still runs after {timeout} s") from exc

    def _release(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        super()._release()

    def stderr_text(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace")


class Threaded(Channel):
    """The real stdio transport (promptd.transport.server.Server) over real pipes, run in a
    thread of the test's own process: framing, concurrency, cancellation, back-pressure and every
    method as a host sees them, without a process start. Configured like `promptd serve`: `args`
    take --config and --log-level, `env` the PROMPTD_* settings (read as `serve` reads its
    environment); anything a process would read from its own environment is refused here."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, test_methods: bool = False) -> None:
        from support.wire import TEST_TABLE

        from promptd.childenv import VAULT_KEY_ENV
        from promptd.config import ENV_PREFIX, load
        from promptd.config import ignored_env_names as not_settings
        from promptd.logs import Logger
        from promptd.runtime import Runtime
        from promptd.transport.server import Server

        environ = {"PROMPTD_LOG_LEVEL": "warning", **(env or {})}
        # The vault key is read from the process's own environment when it is used, not by load.
        foreign = [name for name in environ if not name.startswith(ENV_PREFIX) or name == VAULT_KEY_ENV or name in not_settings(environ)]
        assert not foreign, f"{foreign}: not settings; a test that needs them takes a spawned server (tests/wire/) or monkeypatch"
        options = dict(zip(args[::2], args[1::2]))
        assert len(args) % 2 == 0 and set(options) <= {"--config", "--log-level"}, args
        config = load(options.get("--config"), environ)
        if "--log-level" in options:
            config = config.merged({"log_level": options["--log-level"]})
        self._log = io.StringIO()
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        server = Server(Runtime(config, Logger(config.log_level, self._log)), in_r, out_w, table=TEST_TABLE if test_methods else None)
        self._status: list[int] = []

        def run() -> None:
            try:
                self._status.append(server.run())
            finally:
                for fd in (in_r, out_w):  # the output ends as a process's would
                    os.close(fd)

        self._thread = threading.Thread(target=run, name="promptd-serve", daemon=True)
        self._thread.start()
        super().__init__(in_w, out_r)

    def alive(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float = WAIT_S) -> int:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"the server thread still runs after {timeout} s")
        return self._status[0]

    def stderr_text(self) -> str:
        return self._log.getvalue()


WIRE = ROOT / "tests" / "wire"


@pytest.fixture
def server_class(request: pytest.FixtureRequest) -> type[Channel]:
    """What `served`, `spawn`, `testserver` and the shared servers are: spawned processes for the
    tests in tests/wire/ (what is about the process itself), in-thread servers everywhere else."""
    return Served if request.path.is_relative_to(WIRE) else Threaded


@pytest.fixture
def served(server_class: type[Channel]) -> Iterator[Channel]:
    server = server_class()
    try:
        yield server
    finally:
        server.close()


def _key(args: tuple[str, ...], env: dict[str, str] | None, test_methods: bool, tag: str) -> tuple[Any, ...]:
    return (args, tuple(sorted((env or {}).items())), test_methods, tag)


@pytest.fixture(scope="module")
def _module_servers() -> Iterator[dict[tuple[Any, ...], Channel]]:
    """The servers `shared_spawn` hands out, one per configuration, closed with the module."""
    pool: dict[tuple[Any, ...], Channel] = {}
    yield pool
    for server in pool.values():
        server.close()


@pytest.fixture
def shared_spawn(_module_servers: dict[tuple[Any, ...], Channel], server_class: type[Channel]) -> Iterator[Any]:
    """Factory for a server shared by the test module's stateless wire checks, one per set of
    arguments / environment (started on first use).

    Only for tests that leave no state behind that another test could see: no `initialize`
    (but see `tag`), `shutdown`/`exit`, `providers/register`, config change, subscription or
    stderr reading, and a session id of the test's own where a method keeps per-session state. Such tests take
    `served`/`spawn`, a server of their own. After each test the server must answer a fresh
    request with nothing else unread or in flight; otherwise it is closed and the next test
    gets a new one, so a failing test cannot leak frames into the next.

    `tag` names servers that differ only in what the tests do to them once (e.g. initialize with
    some offset unit): every test taking that tag wants the same set-up, and the caller does it
    when the server is new (a fresh server has none of the caller's attributes)."""
    used: list[tuple[tuple[Any, ...], Channel]] = []

    def make(*args: str, env: dict[str, str] | None = None, test_methods: bool = False, tag: str = "") -> Channel:
        key = _key((server_class.__name__, *args), env, test_methods, tag)
        server = _module_servers.get(key)
        if server is None or not server.alive():
            server = _module_servers[key] = server_class(*args, env=env, test_methods=test_methods)
            # Handed out once it answers: a test timing its requests never times the start.
            assert server.settled(), server.stderr_text()
        used.append((key, server))
        return server

    yield make
    for key, server in used:
        if _module_servers.get(key) is server and not server.settled():
            del _module_servers[key]
            server.close()


@pytest.fixture
def shared_served(shared_spawn: Any) -> Channel:
    """A plain server shared by the module's stateless wire checks (see `shared_spawn`)."""
    return shared_spawn()


@pytest.fixture
def shared_testserver(shared_spawn: Any) -> Channel:
    """`testserver`'s test methods on a server shared by the module's stateless checks."""
    return shared_spawn(test_methods=True)


@pytest.fixture
def testserver(server_class: type[Channel]) -> Iterator[Channel]:
    """The real transport with test-only methods (test/sleep, test/noisy, test/explode,
    test/ask_client) added to the table."""
    server = server_class(test_methods=True)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def spawn(server_class: type[Channel]) -> Iterator[Any]:
    """Factory for servers with their own arguments or environment; all closed at the end."""
    started: list[Channel] = []

    def make(*args: str, env: dict[str, str] | None = None, test_methods: bool = False) -> Channel:
        server = server_class(*args, env=env, test_methods=test_methods)
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
