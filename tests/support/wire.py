"""The protocol connection driven in memory, and the raw-bytes wire vectors (protocol/vectors/wire/)
read, replayed and checked, in memory and against a spawned `promptd serve`."""

from __future__ import annotations

import json
import os
import select
import subprocess
import threading
import time
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

from conftest import PROMPTD

from promptd.config import Config
from promptd.local import Local, LocalError
from promptd.logs import Logger
from promptd.methods import TABLE
from promptd.rpc import connection as rpc
from promptd.runtime import Runtime
from support.test_methods import TEST_METHODS

WIRE_VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "wire"
TEST_TABLE = {**TABLE, **{m.name: m for m in TEST_METHODS}}


@dataclass
class Driver:
    """A Connection with a transport made of plain calls: each Call is answered at once through the
    in-process door, except those of a `held` method (test/sleep), which stay in flight until the
    test answers them, as a running request would."""

    max_message_bytes: int = 16 << 20
    held_methods: frozenset[str] = frozenset({"test/sleep"})
    conn: rpc.Connection = field(init=False)
    door: Local = field(init=False)
    log: StringIO = field(init=False, default_factory=StringIO)
    out: bytearray = field(init=False, default_factory=bytearray)
    events: list[rpc.Event] = field(init=False, default_factory=list)
    held: dict[Any, rpc.Call] = field(init=False, default_factory=dict)
    exit_code: int | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.conn = rpc.Connection(TEST_TABLE, self.max_message_bytes)
        self.door = Local(runtime=Runtime(Config(), Logger("debug", self.log)), table=TEST_TABLE)

    def feed(self, data: bytes) -> list[Any]:
        """Feeds bytes (b"" ends the input), acts on every event; returns the frames written."""
        start = len(self.out)
        self.conn.receive_data(data)
        while (event := self.conn.next_event()) is not None:
            self.events.append(event)
            self._act(event)
        return frames(bytes(self.out[start:]))

    def send(self, *messages: Any) -> list[Any]:
        return self.feed(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def answer(self, ident: Any, result: Any) -> list[Any]:
        self.held.pop(ident)
        return frames(self.conn.send_result(ident, result))

    def _act(self, event: rpc.Event) -> None:
        if isinstance(event, rpc.Send):
            self.out += event.data
        elif isinstance(event, rpc.Call):
            if event.method in self.held_methods:
                self.held[event.id] = event
                return
            try:
                data = self.conn.send_result(event.id, self.door.call(event.method, event.params))
            except LocalError as failure:
                data = self.conn.send_error(event.id, failure.code, failure.message, failure.data)
            self.out += data
        elif isinstance(event, rpc.Cancel) and event.id in self.held:
            del self.held[event.id]
            self.out += self.conn.send_cancelled(event.id)
        elif isinstance(event, (rpc.Exit, rpc.EndOfInput)):
            # What is still running is cancelled and answered, as the transport does.
            for ident in list(self.held):
                del self.held[ident]
                self.out += self.conn.send_cancelled(ident)
            self.exit_code = self.conn.exit_code
        elif isinstance(event, rpc.Notify):
            try:
                self.door.call(event.method, event.params)
            except LocalError:
                pass  # never answered


def frames(data: bytes) -> list[Any]:
    return [json.loads(line) for line in data.splitlines() if line]


# ---- wire vectors ----------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text("utf-8"))


def chunks(case: dict[str, Any]) -> list[bytes | int]:
    """The vector's input as writes, with `{"await": n}` kept as the int n (wait for n frames)."""
    out: list[bytes | int] = []
    for item in case["in"]:
        if isinstance(item, str):
            out.append(item.encode() + b"\n")
        elif "raw" in item:
            out.append(item["raw"].encode())
        elif "hex" in item:
            out.append(bytes.fromhex(item["hex"]))
        elif "fill" in item:
            out.append(item["fill"].encode() * item["times"])
        else:
            out.append(int(item["await"]))
    return out


def matches(expected: Any, actual: Any) -> bool:
    """Objects match when every member of the expected one matches (more members are allowed);
    arrays element by element; anything else by equality."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and len(expected) == len(actual) and all(matches(e, a) for e, a in zip(expected, actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return bool(expected == actual)


def unordered(expected: list[Any], actual: list[Any], match: Any) -> bool:
    if len(expected) != len(actual):
        return False
    left = list(actual)
    for item in expected:
        found = next((i for i, candidate in enumerate(left) if match(item, candidate)), None)
        if found is None:
            return False
        left.pop(found)
    return True


def frame_matches(expected: Any, actual: Any) -> bool:
    """A batch answer is an array whose members may come in any order."""
    if isinstance(expected, list):
        return isinstance(actual, list) and unordered(expected, actual, matches)
    return matches(expected, actual)


def check(case: dict[str, Any], got: list[Any], exit_code: int | None) -> None:
    assert unordered(case["out"], got, frame_matches), f"{case['description']}\n got: {got}\nwant: {case['out']}"
    assert exit_code == case.get("exit_code", 0), f"{case['description']}: exit status {exit_code}"


def replay_in_memory(case: dict[str, Any]) -> None:
    driver = Driver(max_message_bytes=case.get("max_message_bytes", 16 << 20))
    got: list[Any] = []
    for piece in chunks(case):
        if isinstance(piece, int):
            assert len(got) >= piece, f"{case['description']}: {len(got)} frames before an await of {piece}"
        else:
            got += driver.feed(piece)
    got += driver.feed(b"")
    check(case, got, driver.exit_code)


class _Replay:
    """One vector replayed over real pipes: writes its input (waiting where it says), closes the
    input, reads every frame until the output closes."""

    def __init__(self, case: dict[str, Any], write_fd: int, read_fd: int) -> None:
        self.case = case
        self.write_fd: int | None = write_fd
        self.read_fd = read_fd
        self.pieces = chunks(case)
        self.buffer = b""
        self.got: list[Any] = []

    def step(self, deadline: float) -> bool:
        """Does what can be done now; True when the output has ended."""
        while self.pieces and self.write_fd is not None:
            piece = self.pieces[0]
            if isinstance(piece, int):
                if len(self.got) < piece:
                    break
            else:
                try:
                    view = memoryview(piece)
                    while view:
                        view = view[os.write(self.write_fd, view) :]
                except BrokenPipeError:
                    self.pieces.clear()  # the server is gone (an `exit` in the input)
                    break
            self.pieces.pop(0)
        if not self.pieces and self.write_fd is not None:
            os.close(self.write_fd)
            self.write_fd = None
        if not select.select([self.read_fd], [], [], 0.01)[0]:
            assert time.monotonic() < deadline, f"{self.case['description']}: no end of output; got {self.got}"
            return False
        chunk = os.read(self.read_fd, 1 << 16)
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        self.got += [json.loads(line) for line in lines if line]
        return not chunk

    def close(self) -> None:
        if self.write_fd is not None:
            os.close(self.write_fd)
        os.close(self.read_fd)


def _run_all(replays: list[_Replay], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pending = list(replays)
    while pending:
        pending = [run for run in pending if not run.step(deadline)]


def replay_spawned(cases: list[dict[str, Any]], timeout: float = 60.0) -> None:
    """Replays each case on a `promptd serve` process of its own (each vector ends its server),
    all at once: the exit status is the process's."""
    procs, replays = [], []
    try:
        for case in cases:
            env = dict(os.environ, PROMPTD_LOG_LEVEL="warning")
            if "max_message_bytes" in case:
                env["PROMPTD_MAX_MESSAGE_BYTES"] = str(case["max_message_bytes"])
            proc = subprocess.Popen([*PROMPTD, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            assert proc.stdin is not None and proc.stdout is not None
            procs.append(proc)
            replays.append(_Replay(case, os.dup(proc.stdin.fileno()), os.dup(proc.stdout.fileno())))
            proc.stdin.close()
            proc.stdout.close()
        _run_all(replays, timeout)
        for run, proc in zip(replays, procs):
            check(run.case, run.got, proc.wait(timeout=60))
    finally:
        for run in replays:
            run.close()
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


def replay_over_pipes(cases: list[dict[str, Any]], timeout: float = 60.0) -> None:
    """Replays each case on the real stdio transport (promptd.transport.server.Server) over real pipes, in a
    thread of this process: the transport's reading, tasks and writer without a process start."""
    from promptd.transport.server import Server

    servers, replays = [], []
    try:
        for case in cases:
            config = Config().merged({"max_message_bytes": case.get("max_message_bytes", 16 << 20)})
            in_r, in_w = os.pipe()
            out_r, out_w = os.pipe()
            server = Server(Runtime(config, Logger("warning")), in_r, out_w)
            status: list[int] = []

            def run(server: Server = server, status: list[int] = status, fds: tuple[int, int] = (in_r, out_w)) -> None:
                try:
                    status.append(server.run())
                finally:
                    for fd in fds:  # the output ends as a process's would
                        os.close(fd)

            thread = threading.Thread(target=run, daemon=True)
            thread.start()
            servers.append((thread, status))
            replays.append(_Replay(case, in_w, out_r))
        _run_all(replays, timeout)
        for replay, (thread, status) in zip(replays, servers):
            thread.join(60)
            check(replay.case, replay.got, status[0] if status else None)
    finally:
        for replay in replays:
            replay.close()
