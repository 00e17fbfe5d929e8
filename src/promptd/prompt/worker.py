"""Renders of caller-supplied templates in a separate, killable process, under a CPU deadline.

Domain layer: must not import promptd.rpc or promptd.methods. The sandbox (engine.py, limits.py)
bounds what a caller's template can build, but not the CPU time a loop takes, and a Python thread
cannot be stopped. So custom templates and bodies (compile and render) run in a worker process
that promptd kills when its CPU time passes the deadline or the request is cancelled; the request
then fails with RenderTimeout (or is answered as cancelled) and a fresh worker replaces the killed
one. The shipped templates and the sealed Apply-Patch template never come here: they are
promptd's own, bounded and cached in-process, and the Apply-Patch plaintext must not leave it.

Wire between promptd and a worker: frames of a 4-byte big-endian length and an orjson document.
The worker sends {"ready": true} once imported, then one reply per job:
{"text": ...} or {"error": {"type": ..., "message": ..., "data": {...}}}.

Run as `python -m promptd.prompt.worker` (the child side, `serve` below).
"""

from __future__ import annotations

import atexit
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import Any

import orjson

from promptd.childenv import child_env
from promptd.errors import InvalidContext, PromptdError, RenderTimeout, TemplateRender, TemplateSyntax
from promptd.prompt.engine import is_templated, normalize

HEADER = struct.Struct(">I")
# Idle workers kept warm: one serves the usual one-render-at-a-time host; a second covers a burst
# without a cold start. Busier moments start more, which exit when they are not needed.
KEEP_IDLE = 2
# How long a worker may take to start (import jinja2 and the engine) on a loaded machine.
START_TIMEOUT_S = 30.0
# How often the CPU time of a busy worker is read (and cancellation noticed).
POLL_S = 0.02
# A worker starved of CPU (a loaded machine) still ends: wall time is capped at this many times
# the CPU deadline, plus a second.
WALL_FACTOR = 4
# What a worker may answer with: the domain errors a render raises, by name.
ERRORS: dict[str, type[PromptdError]] = {cls.__name__: cls for cls in (TemplateSyntax, TemplateRender, InvalidContext)}


class Cancelled(Exception):
    """The job was cancelled (the request's task was); the caller answers it as cancelled."""


class Cancel:
    """Shared by a request's task (which may cancel) and the thread that waits for its render."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cancelled = False
        self._worker: Worker | None = None

    def cancel(self) -> None:
        """Kills the worker running this job, if any; whatever waits for it stops at once."""
        with self._lock:
            self.cancelled = True
            worker = self._worker
        if worker is not None:
            worker.kill()

    def attach(self, worker: Worker | None) -> None:
        with self._lock:
            self._worker = worker
            cancelled = self.cancelled
        if cancelled and worker is not None:
            worker.kill()


class WorkerGone(Exception):
    """The worker ended or its pipe broke before it answered."""


class Worker:
    """One worker process and its two pipes."""

    def __init__(self) -> None:
        # The allowlist (promptd.childenv: never a PROMPTD_* variable or the vault key, which a
        # caller's template has no business near), plus what the interpreter needs to import
        # the same promptd the parent runs, even when it was started from a source tree.
        env = child_env()
        env["PYTHONPATH"] = os.pathsep.join(p for p in [os.path.dirname(os.path.dirname(os.path.dirname(__file__))), os.environ.get("PYTHONPATH", "")] if p)
        if os.environ.get("PYTHONHOME"):
            env["PYTHONHOME"] = os.environ["PYTHONHOME"]  # a relocated interpreter finds its library by it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "promptd.prompt.worker", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        self._buffer = b""
        self.ready = False

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass

    def close(self) -> None:
        self.kill()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, document: Any) -> None:
        data = orjson.dumps(document)
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(HEADER.pack(len(data)) + data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise WorkerGone from exc

    def cpu_s(self) -> float:
        """The worker's CPU time so far (user + system); wall time where /proc cannot tell."""
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return time.monotonic()

    def receive(self, cpu_deadline_s: float | None, wall_deadline_s: float, cancel: Cancel | None) -> tuple[Any, bool]:
        """The next document, or (None, True) when the CPU or wall deadline passed first."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        cpu_start = self.cpu_s()
        wall_end = time.monotonic() + wall_deadline_s
        while True:
            if len(self._buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self._buffer)
                if len(self._buffer) >= HEADER.size + size:
                    document = orjson.loads(self._buffer[HEADER.size : HEADER.size + size])
                    self._buffer = self._buffer[HEADER.size + size :]
                    return document, False
            if cancel is not None and cancel.cancelled:
                raise Cancelled
            if time.monotonic() > wall_end or (cpu_deadline_s is not None and self.cpu_s() - cpu_start > cpu_deadline_s):
                return None, True
            ready, _, _ = select.select([fd], [], [], POLL_S)
            if ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    raise WorkerGone
                self._buffer += chunk


class WorkerPool:
    """Warm workers, handed out one job at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[Worker] = []
        self._closed = False

    def warm(self) -> None:
        """Starts a worker now if none is idle, so the next custom render finds one ready."""
        with self._lock:
            if self._idle or self._closed:
                return
            self._idle.append(Worker())

    def render(self, source: str, variables: Mapping[str, Any], name: str, strict: bool = False, *, deadline_s: float, cancel: Cancel | None = None) -> str:
        """Compiles and renders `source` in a worker; raises TemplateSyntax, TemplateRender,
        RenderTimeout (CPU time over `deadline_s`) or Cancelled."""
        source = normalize(source)
        if not is_templated(source):
            return source  # returned verbatim (the dialect's rule, as engine.render does): nothing to run
        job = {"source": source, "variables": dict(variables), "name": name, "strict": strict}
        for attempt in range(2):
            worker = self._take()
            if cancel is not None:
                cancel.attach(worker)
            try:
                if not worker.ready:
                    reply, late = worker.receive(None, START_TIMEOUT_S, cancel)
                    if late or not reply.get("ready"):
                        raise WorkerGone
                    worker.ready = True
                worker.send(job)
                reply, late = worker.receive(deadline_s, deadline_s * WALL_FACTOR + 1, cancel)
            except (WorkerGone, Cancelled, OSError) as exc:
                self._discard(worker)
                if isinstance(exc, Cancelled) or (cancel is not None and cancel.cancelled):
                    raise Cancelled from None
                if attempt == 0:
                    continue  # an idle worker that died (killed from outside): one fresh try
                raise TemplateRender(f"template {name!r}: the render process ended", template=name, line=None, cause="the render process ended", error="crashed") from None
            finally:
                if cancel is not None:
                    cancel.attach(None)
            if late:
                self._discard(worker)
                raise RenderTimeout(f"template {name!r} took more than {round(deadline_s * 1000)} ms of CPU time", template=name, limit_ms=round(deadline_s * 1000))
            self._give_back(worker)
            return answer(reply, name)
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()

    def _take(self) -> Worker:
        with self._lock:
            while self._idle:
                worker = self._idle.pop()
                if worker.alive():
                    return worker
                worker.close()
        return Worker()

    def _give_back(self, worker: Worker) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < KEEP_IDLE:
                self._idle.append(worker)
                return
        worker.close()

    def _discard(self, worker: Worker) -> None:
        worker.close()
        # Replaced at once, so the next custom render does not pay for a cold start.
        self.warm()


def answer(reply: Any, name: str) -> str:
    text = reply.get("text") if isinstance(reply, dict) else None
    if isinstance(text, str):
        return text
    error = reply.get("error") if isinstance(reply, dict) else None
    cls = ERRORS.get(str(error.get("type"))) if isinstance(error, dict) else None
    if cls is None or not isinstance(error, dict):
        raise TemplateRender(f"template {name!r}: the render process failed", template=name, line=None, cause="the render process failed", error="crashed")
    data = {k: v for k, v in (error.get("data") or {}).items() if k != "kind"}
    raise cls(str(error.get("message", "")), **data)


_POOL: WorkerPool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> WorkerPool:
    """The process-wide pool, built on first use; its workers are killed when promptd exits."""
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = WorkerPool()
                atexit.register(_POOL.close)
    return _POOL


# ---- the worker's side ----------------------------------------------------------------------------


def _watch_parent(parent: int) -> None:
    """Ends this worker when promptd is gone, even in the middle of a render (portable: no
    PR_SET_PDEATHSIG, which would follow the thread that started the worker, not the process)."""
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.2)


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def _write(fd: int, document: Any) -> None:
    data = orjson.dumps(document)
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def serve(parent: int) -> None:
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    # The replies' descriptor is private; fd 1 goes to stderr so nothing else can write into it.
    out = os.dup(1)
    os.dup2(2, 1)
    from promptd.prompt.engine import engine

    eng = engine()
    _write(out, {"ready": True})
    while True:
        head = _read_exactly(0, HEADER.size)
        if head is None:
            return
        (size,) = HEADER.unpack(head)
        body = _read_exactly(0, size)
        if body is None:
            return
        job = orjson.loads(body)
        try:
            reply: dict[str, Any] = {"text": eng.render(job["source"], job["variables"], job["name"], strict=job["strict"])}
        except PromptdError as exc:
            reply = {"error": {"type": type(exc).__name__, "message": exc.message, "data": exc.to_data()}}
        except RecursionError:
            name = job["name"]
            reply = {"error": {"type": "TemplateRender", "message": f"template {name!r}: nested too deeply", "data": {"template": name, "line": None, "cause": "nested too deeply", "error": "RecursionError"}}}
        _write(out, reply)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
