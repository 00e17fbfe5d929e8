"""Renders of caller-supplied templates in a separate, killable process, under a CPU deadline and
a memory limit.

Domain layer: must not import promptd.rpc or promptd.methods. The sandbox (engine.py, limits.py)
bounds what a caller's template can build, but not the CPU time a loop takes, and a Python thread
cannot be stopped. So custom templates and bodies (compile and render), and the lint of a
caller's template, run in a worker process that promptd kills when its CPU time passes the
deadline or the request is cancelled; the request then fails with RenderTimeout (or is answered
as cancelled) and a fresh worker replaces the killed one. The shipped templates and the sealed
templates never come here: the shipped ones are promptd's own, bounded and cached in-process, and
sealed plaintext must not leave the process. A sealed template is still text promptd did not
write (anyone can seal with the shipped key), so its render runs under the same deadline in
promptd's own thread (`bounded`, below): a watchdog stops it by raising an exception in that
thread when its CPU time passes the deadline or the request is cancelled.

Memory: the sandbox's budget counts characters and items, not Python's overhead per object, so
each worker also limits its own address space to what it uses once imported plus the job's
budget (config prompt.render_memory_mb). An allocation past it raises MemoryError, answered as
the sandbox's refusal (TemplateRender, data.error "security"). At most MAX_RUNNING jobs run at
once; the others wait for a slot (and stop waiting when cancelled), so all renders together stay
within MAX_RUNNING budgets.

Wire between promptd and a worker: frames of a 4-byte big-endian length and a JSON document
(promptd.exactjson: wide integers and lone surrogates in a context or template travel exactly).
The worker sends {"ready": true} once imported, then one reply per job: {"text": ...},
{"violations": [[line, column, kind, message, severity], ...]} (a lint job) or {"error": {"type":
..., "message": ..., "data": {...}}}, with "retire": true when the worker ends after it (it kept
too much of its memory). A worker never writes anything but JSON lines to stderr.

Run as `python -m promptd.prompt.worker` (the child side, `serve` below).
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from promptd import exactjson
from promptd.childenv import child_env
from promptd.errors import InvalidContext, PromptdError, RenderTimeout, TemplateRender, TemplateSyntax
from promptd.prompt import limits
from promptd.prompt.engine import is_templated, normalize

HEADER = struct.Struct(">I")
# Idle workers kept warm: one serves the usual one-render-at-a-time host; a second covers a burst
# without a cold start. With MAX_RUNNING busy, at most MAX_RUNNING + KEEP_IDLE workers exist.
KEEP_IDLE = 2
# How long a worker may take to start (import jinja2 and the engine) on a loaded machine.
START_TIMEOUT_S = 30.0
# How often the CPU time of a busy worker is read (and cancellation noticed).
POLL_S = 0.02
# A worker starved of CPU (a loaded machine) still ends: wall time is capped at this many times
# the CPU deadline, plus a second.
WALL_FACTOR = 4
# Jobs running at once, each in its own worker: renders are CPU-bound, so more than two on a small
# machine only share the same cores, and the cap bounds the memory all renders can take together
# (this many times prompt.render_memory_mb). A host renders one prompt per turn; more wait their turn.
MAX_RUNNING = max(1, min(2, os.cpu_count() or 1))
# A worker holding more than this share of its memory budget after a job is replaced (_Memory.worn).
RETIRE_SHARE = 0.25
# The name a lint job's errors carry (the lint's own: lint.NAME).
LINT_NAME = "template"
# What a worker may answer with: the domain errors a render raises, by name.
ERRORS: dict[str, type[PromptdError]] = {cls.__name__: cls for cls in (TemplateSyntax, TemplateRender, InvalidContext)}


class Cancelled(Exception):
    """The job was cancelled (the request's task was); the caller answers it as cancelled."""


class Cancellation:
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
            # -P: `python -m` would put the working directory first on sys.path, and promptd's
            # working directory is often the repository the agent works in, so its `struct.py`
            # or `orjson/` would run in the worker. -P leaves it out (and cwd="/" besides); the
            # PYTHONPATH above is promptd's own folder only.
            [sys.executable, "-P", "-m", "promptd.prompt.worker", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd="/",
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
        data = exactjson.dumps(document)
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

    def receive(self, cpu_deadline_s: float | None, wall_deadline_s: float, cancel: Cancellation | None) -> tuple[Any, bool]:
        """The next document, or (None, True) when the CPU or wall deadline passed first."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        cpu_start = self.cpu_s()
        wall_end = time.monotonic() + wall_deadline_s
        while True:
            if len(self._buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self._buffer)
                if len(self._buffer) >= HEADER.size + size:
                    document = exactjson.loads(self._buffer[HEADER.size : HEADER.size + size])
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
    """Warm workers, handed out one job at a time, at most MAX_RUNNING at once."""

    def __init__(self, max_running: int = MAX_RUNNING) -> None:
        self._lock = threading.Lock()
        self._idle: list[Worker] = []
        self._closed = False
        self._slots = threading.BoundedSemaphore(max_running)

    def warm(self) -> None:
        """Starts a worker now if none is idle, so the next custom render finds one ready."""
        with self._lock:
            if self._idle or self._closed:
                return
            self._idle.append(Worker())

    def render(
        self,
        source: str,
        variables: Mapping[str, Any],
        name: str,
        strict: bool = False,
        *,
        deadline_s: float,
        memory_mb: int | None = None,
        cancel: Cancellation | None = None,
    ) -> str:
        """Compiles and renders `source` in a worker; raises TemplateSyntax, TemplateRender,
        RenderTimeout (CPU time over `deadline_s`) or Cancelled. `memory_mb` is the worker's
        memory budget for the job (config prompt.render_memory_mb; None: no limit)."""
        source = normalize(source)
        if not is_templated(source):
            return source  # returned verbatim (the dialect's rule, as engine.render does): nothing to run
        job = {"source": source, "variables": dict(variables), "name": name, "strict": strict, "memory_mb": memory_mb}
        return answer(self._run(job, name, deadline_s, cancel), name)

    def lint(
        self,
        source: str,
        exempt: frozenset[str],
        strict: bool,
        flags: frozenset[str],
        tool_kinds: frozenset[str],
        volatile: frozenset[str] = frozenset(),
        *,
        deadline_s: float,
        memory_mb: int | None = None,
        cancel: Cancellation | None = None,
    ) -> list[Any]:
        """The lint's findings (lint.findings) for `source`, found in a worker under the same
        deadline and memory budget as a render; raises RenderTimeout or Cancelled."""
        from promptd.prompt.lint import Violation

        job = {
            "lint": True,
            "source": source,
            "exempt": sorted(exempt),
            "strict": strict,
            "flags": sorted(flags),
            "tool_kinds": sorted(tool_kinds),
            "volatile": sorted(volatile),
            "memory_mb": memory_mb,
        }
        reply = self._run(job, LINT_NAME, deadline_s, cancel)
        found = reply.get("violations") if isinstance(reply, dict) else None
        if not isinstance(found, list):
            answer(reply, LINT_NAME)  # raises the error the worker answered
        return [Violation(*item) for item in found or []]

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()

    def _run(self, job: dict[str, Any], name: str, deadline_s: float, cancel: Cancellation | None) -> Any:
        """The worker's reply to `job`, once a slot is free; raises RenderTimeout, Cancelled, or
        TemplateRender when the worker ended twice without answering."""
        self._wait_for_slot(cancel)
        try:
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
                if isinstance(reply, dict) and reply.get("retire"):
                    self._discard(worker)  # it kept much of its memory: a fresh one takes its place
                else:
                    self._give_back(worker)
                return reply
            raise AssertionError("unreachable")
        finally:
            self._slots.release()

    def _wait_for_slot(self, cancel: Cancellation | None) -> None:
        """Blocks until fewer than MAX_RUNNING jobs run; a cancelled job stops waiting."""
        while not self._slots.acquire(timeout=POLL_S):
            if cancel is not None and cancel.cancelled:
                raise Cancelled
        if cancel is not None and cancel.cancelled:
            self._slots.release()
            raise Cancelled

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


# ---- in-process renders under a deadline ----------------------------------------------------------

# How many times the watchdog raises its stop in a thread that is still rendering: an exception
# raised while the thread runs a finalizer (a __del__, a weakref callback) is printed and dropped
# by Python, and Jinja's traceback rewriting drops one raised at the wrong instant, so the stop is
# raised again (every RESTOP_S) until the render ends. Bounded, so that the thread's own clean-up
# (`bounded`) can be written to absorb every one of them.
MAX_STOPS = 3
RESTOP_S = 0.25

T = TypeVar("T")


class _Stop(BaseException):
    """Raised in a rendering thread by its watchdog. A BaseException, so that no `except
    Exception` on the way (the engine's, Jinja's) turns it into a template error."""


# (PyThreadState_SetAsyncExc, ctypes.c_ulong, ctypes.py_object), once resolved.
_async_exc: tuple[Any, Any, Any] | None = None


def _async_exc_api() -> bool:
    """Resolves PyThreadState_SetAsyncExc once, before any watchdog runs: the first lookup on
    ctypes.pythonapi runs Python code (CDLL.__getattr__), which must never be what a stop lands
    in. False where ctypes is missing."""
    global _async_exc
    if _async_exc is None:
        try:
            import ctypes
        except ImportError:
            return False
        _async_exc = (ctypes.pythonapi.PyThreadState_SetAsyncExc, ctypes.c_ulong, ctypes.py_object)
    return True


def _raise_in(ident: int, exc: type[BaseException] | None) -> None:
    """Has thread `ident` raise `exc` at its next bytecode (None: withdraws one not yet raised).
    Only C runs here (ctypes' call and argument types), so nothing is raised inside it."""
    assert _async_exc is not None
    set_async_exc, c_ulong, py_object = _async_exc
    # No argtypes: None must reach C as NULL (withdraw), which py_object would make Py_None.
    set_async_exc(c_ulong(ident), py_object(exc) if exc is not None else None)


def _cpu_clock(ident: int) -> int | None:
    """The CPU-time clock of thread `ident`, where the platform has one (Linux; not macOS)."""
    try:
        return time.pthread_getcpuclockid(ident)
    except (AttributeError, OSError):
        return None


class _Watch:
    """The watchdog of one in-process render, in a thread of its own. It raises _Stop in the
    rendering thread when the thread's CPU time passes the deadline (or its wall time passes
    WALL_FACTOR times it plus a second, as a worker's does, and wherever no CPU clock exists), or
    when the request is cancelled. Every raise happens under `lock` while `active`; the rendering
    thread clears `active` and withdraws any raise not yet delivered under the same lock
    (`finish`), so none can be delivered after it."""

    def __init__(self, ident: int, deadline_s: float, cancel: Cancellation | None) -> None:
        self.lock = threading.Lock()
        self.active = True
        self.ident = ident
        self.deadline_s = deadline_s
        self.cancel = cancel
        self.reason: str | None = None  # "timeout" or "cancelled", once decided
        self.done = threading.Event()
        self.clock = _cpu_clock(ident)
        self.cpu_start = time.clock_gettime(self.clock) if self.clock is not None else 0.0

    def finish(self) -> None:
        """Called by the rendering thread: no _Stop is raised in it after this returns."""
        with self.lock:
            self.active = False
            _raise_in(self.ident, None)
        self.done.set()

    def _over(self, wall_end: float) -> bool:
        if time.monotonic() > wall_end:
            return True
        if self.clock is None:
            return False
        try:
            return time.clock_gettime(self.clock) - self.cpu_start > self.deadline_s
        except OSError:
            return False  # the thread is gone: the render is over, and `done` is about to say so

    def watch(self) -> None:
        wall_end = time.monotonic() + self.deadline_s * WALL_FACTOR + 1
        stops, next_stop = 0, 0.0
        while not self.done.wait(POLL_S):
            if self.reason is None:
                if self.cancel is not None and self.cancel.cancelled:
                    self.reason = "cancelled"
                elif self._over(wall_end):
                    self.reason = "timeout"
                else:
                    continue
            if stops >= MAX_STOPS or time.monotonic() < next_stop:
                continue
            with self.lock:
                if not self.active:
                    return
                _raise_in(self.ident, _Stop)
            stops += 1
            next_stop = time.monotonic() + RESTOP_S


def bounded(run: Callable[[], T], name: str, *, deadline_s: float, cancel: Cancellation | None = None) -> T:
    """`run()` in this thread, stopped when its CPU time passes `deadline_s` or `cancel` is
    cancelled: raises RenderTimeout or Cancelled then, as a worker's render does; otherwise
    returns or raises what `run` does. For the renders that must stay in promptd's process (a
    sealed template's plaintext never leaves it).

    Why this is sound: the stop is an exception raised in this thread at its next bytecode
    (PyThreadState_SetAsyncExc), and a template's loops are Python bytecode (Jinja compiles them
    to Python), so it lands within a bytecode of the decision. It never lands outside the render:
    the watchdog raises only under its lock while the render is active, and `finish` ends that and
    withdraws a raise not yet delivered under the same lock. What is left is the instant between
    `run` returning and `finish` holding the lock; a stop delivered there is caught below. At most
    MAX_STOPS are ever raised, so the clean-up is MAX_STOPS + 1 attempts deep, each nested in the
    handler of the one before: a stop can land only at a call or a loop's back edge, and every one
    of those is inside a `try` that catches it (no loop here, on purpose)."""
    if not _async_exc_api():
        return run()  # no ctypes (a reduced build): the sandbox's own bounds still hold
    watch = _Watch(threading.get_ident(), deadline_s, cancel)
    stopped = False
    error: BaseException | None = None
    result: Any = None
    try:
        threading.Thread(target=watch.watch, name="promptd-render-watch", daemon=True).start()
        result = run()
    except _Stop:
        stopped = True
    except BaseException as exc:  # noqa: BLE001 - raised again below, once the watchdog is settled
        error = exc
    try:
        watch.finish()
    except _Stop:
        stopped = True
        try:
            watch.finish()
        except _Stop:
            try:
                watch.finish()
            except _Stop:
                watch.finish()  # MAX_STOPS (3) were delivered: none can follow
    if stopped or watch.reason == "cancelled":
        if watch.reason == "cancelled" or (cancel is not None and cancel.cancelled):
            raise Cancelled
        limit_ms = round(deadline_s * 1000)
        raise RenderTimeout(f"template {name!r} took more than {limit_ms} ms of CPU time", template=name, limit_ms=limit_ms)
    if error is not None:
        raise error
    return result  # type: ignore[no-any-return]


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
    data = exactjson.dumps(document)
    view = memoryview(HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _address_space() -> int | None:
    """This process's virtual memory size in bytes (Linux); None where /proc cannot tell."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class _Memory:
    """The worker's address-space limit: what it uses once imported (`baseline`) plus the job's
    budget. Python raises MemoryError when an allocation would pass it, and the render fails with
    the sandbox's refusal instead of growing until the machine swaps."""

    def __init__(self) -> None:
        self.baseline = _address_space()
        self.budget: int | None = None

    def limit(self, memory_mb: Any) -> None:
        """Sets the limit for the next job (a job without a budget keeps the last one)."""
        if self.baseline is None or not isinstance(memory_mb, int) or isinstance(memory_mb, bool) or memory_mb <= 0:
            return
        budget = memory_mb << 20
        if budget == self.budget:
            return
        import resource

        try:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            soft = self.baseline + budget
            if hard != resource.RLIM_INFINITY:
                soft = min(soft, hard)
            # The hard limit stays as it was, so a later job may be given a larger budget.
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        except (ValueError, OSError):
            return  # not enforceable here (another platform): the sandbox's own bounds still hold
        self.budget = budget

    def worn(self) -> bool:
        """True when the worker still holds more than RETIRE_SHARE of its budget after a job:
        Python keeps freed memory for reuse rather than returning it, so the next render would
        start with less than its budget. Such a worker answers and is replaced."""
        now = _address_space()
        if self.budget is None or self.baseline is None or now is None:
            return False
        return now - self.baseline > self.budget * RETIRE_SHARE


def _job_reply(eng: Any, job: dict[str, Any]) -> dict[str, Any]:
    """The reply to one job: its text or findings, or the error it raised. Never raises: any
    failure is an answer, so the worker lives on and nothing but JSON reaches stderr."""
    name = LINT_NAME if job.get("lint") else str(job.get("name", "template"))
    try:
        if job.get("lint"):
            from promptd.prompt import lint

            found = lint.findings(job["source"], frozenset(job["exempt"]), job["strict"], frozenset(job["flags"]), frozenset(job["tool_kinds"]), frozenset(job.get("volatile", ())))
            return {"violations": [list(v) for v in found]}
        return {"text": eng.render(job["source"], job["variables"], name, strict=job["strict"])}
    except PromptdError as exc:
        return {"error": {"type": type(exc).__name__, "message": exc.message, "data": exc.to_data()}}
    except MemoryError:
        # Outside the render itself (reading the job, a lint step): the sandbox's refusal too.
        return {
            "error": {"type": "TemplateRender", "message": f"template {name!r}: {limits.MEMORY_CAUSE}", "data": {"template": name, "line": None, "cause": limits.MEMORY_CAUSE, "error": "security"}}
        }
    except Exception as exc:  # noqa: BLE001 - whatever else fails is answered, with its name only
        _log_error("render_worker_error", exc)
        cause = f"the render process failed ({type(exc).__name__})"
        return {"error": {"type": "TemplateRender", "message": f"template {name!r}: {cause}", "data": {"template": name, "line": None, "cause": cause, "error": type(exc).__name__}}}


def _log_error(event: str, exc: BaseException | None) -> None:
    """One JSON line on stderr, as promptd's own log writes them: the exception's name, never its
    message or traceback (either may quote the template)."""
    from promptd.logs import Logger

    Logger().error(event, exception=type(exc).__name__ if exc is not None else None, pid=os.getpid())


def _quiet_uncaught() -> None:
    """Whatever still escapes (a bug in the loop itself, a broken thread) is logged as one JSON
    line, not a traceback; Ctrl-C in promptd's terminal is promptd's to handle, not the worker's
    (the worker ends when promptd does)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.excepthook = lambda kind, exc, tb: _log_error("render_worker_failed", exc)
    threading.excepthook = lambda args: _log_error("render_worker_failed", args.exc_value)


def serve(parent: int) -> None:
    _quiet_uncaught()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    # The replies' descriptor is private; fd 1 goes to stderr so nothing else can write into it.
    out = os.dup(1)
    os.dup2(2, 1)
    from promptd.prompt.engine import engine

    eng = engine()
    memory = _Memory()  # measured once imported, before any job
    _write(out, {"ready": True})
    while True:
        head = _read_exactly(0, HEADER.size)
        if head is None:
            return
        (size,) = HEADER.unpack(head)
        body = _read_exactly(0, size)
        if body is None:
            return
        job = exactjson.loads(body)
        memory.limit(job.get("memory_mb"))
        reply = _job_reply(eng, job)
        if memory.worn():
            reply["retire"] = True
        _write(out, reply)
        if reply.get("retire"):
            return


if __name__ == "__main__":
    serve(int(sys.argv[1]))
