"""The stdio transport: the only module that reads stdin, runs the event loop and ends the process.

Every protocol rule (lifecycle, in-flight ids, batches, cancellation, refusals) is in
promptd.rpc.connection: this module feeds it the bytes read, acts on its events (handlers run
inline, as tasks, or in worker threads), and writes the frames it returns through the one
FrameWriter (promptd.transport.writer). It owns signals, back-pressure, the spill sweep's timer and the exit.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

from promptd.logs import Logger
from promptd.methods import TABLE
from promptd.methods.base import Context, Method
from promptd.methods.boundary import RpcFailure, discard, start
from promptd.rpc import codes, faults
from promptd.rpc.connection import SHUTDOWN_METHOD, Call, Cancel, Connection, Diagnostic, EndOfInput, Event, Exit, Notify, Reply, Send
from promptd.runtime import Runtime
from promptd.transport.peer import ClientPeer
from promptd.transport.reader import InputReader
from promptd.transport.writer import FrameWriter

# Requests running at once before the reader waits: bounds memory under a flood without ever
# refusing a well-behaved client. The bytes of their lines are bounded too, by the setting
# max_in_flight_bytes: a count alone lets 1024 requests of 16 MiB each hold 16 GiB of params.
MAX_IN_FLIGHT = 1024
SWEEP_FIRST_DELAY_S = 1.0
# Retention is counted in hours (24 by default): sweeping hourly keeps files at most an hour late.
SWEEP_INTERVAL_S = 3600.0
# After cancelling what still runs at exit, how long its answers (-32800) may take. A handler in a
# worker thread is not waited for: its task ends when cancelled, the thread goes with the process.
STOP_GRACE_S = 1.0

Task = asyncio.Task[Any]


class Server:
    def __init__(self, runtime: Runtime, in_fd: int, out_fd: int, table: dict[str, Method] | None = None) -> None:
        self.runtime = runtime
        self.log = runtime.log
        self.table = table if table is not None else TABLE
        self.conn = Connection(self.table, runtime.config.max_message_bytes)
        self.writer = FrameWriter(out_fd, on_room=self._room_to_write, on_broken=self._output_closed)
        self._tasks: set[Task] = set()  # every running handler, requests and notifications
        self._sizes: dict[Task, int] = {}  # the line bytes each running handler's params came in
        self._bytes_in_flight = 0
        self._running: dict[Any, Task] = {}  # request id -> its task, for cancellation
        self._exit_code: int | None = None
        self._draining: Task | None = None  # the `shutdown` request's task, once one was read
        self.reader = InputReader(in_fd, self._feed)

    def run(self) -> int:
        """Serves until exit, end of input or SIGTERM; returns the exit status. Unlike asyncio.run,
        does not wait for worker threads still busy with cancelled requests."""
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(self._main())
        finally:
            loop.close()  # shuts the default executor down without waiting for its threads

    async def _main(self) -> int:
        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        self.peer = ClientPeer(self.conn, self.writer, self._loop)
        self.context = Context(runtime=self.runtime, peer=self.peer, lifecycle=self)
        try:
            # SIGINT (a Ctrl-C reaching the host's process group) ends promptd as SIGTERM does:
            # requests in flight are answered, no traceback.
            self._loop.add_signal_handler(signal.SIGTERM, self._on_signal, "sigterm")
            self._loop.add_signal_handler(signal.SIGINT, self._on_signal, "sigint")
        except (NotImplementedError, RuntimeError):
            pass  # not the main thread (a test), or no signals here
        self.log.info("started", pid=os.getpid(), max_message_bytes=self.runtime.config.max_message_bytes)
        await self.reader.start(self._loop)
        sweeper = self._loop.create_task(self._sweep_spill())
        await self._done.wait()
        self.reader.close()
        sweeper.cancel()
        # What is left (the sweeper, a handler that ignored its cancellation) is cancelled and given
        # one pass of the loop to unwind, so no task is destroyed pending when the loop closes.
        left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in left:
            task.cancel()
        if left:
            await asyncio.wait(left, timeout=0)
        self.writer.close()  # flushes the answers already queued (bounded)
        code = self._exit_code if self._exit_code is not None else 0
        self.log.info("stopped", exit_code=code)
        return code

    async def _sweep_spill(self) -> None:
        """Removes expired spill files shortly after start-up (out of the cold start's way) and
        then hourly, in a worker thread."""
        await asyncio.sleep(SWEEP_FIRST_DELAY_S)
        reported: dict[str, int] = {}
        while True:
            try:
                swept = await asyncio.to_thread(self.runtime.sweep_spill)
                if swept.removed:
                    self.log.info("spill_swept", removed=swept.removed)
                # What the sweep left alone, by reason and count (never names: they are paths
                # promptd did not choose); said again only when it changes, not every hour.
                if swept.left and dict(swept.left) != reported:
                    for reason, count in sorted(swept.left.items()):
                        self.log.warning("spill_left_alone", reason=reason, count=count)
                reported = dict(swept.left)
            except Exception as exc:  # a sweep failure must never take the server down
                self.log.warning("spill_sweep_failed", exception=type(exc).__name__)
            await asyncio.sleep(SWEEP_INTERVAL_S)

    # ---- reading ---------------------------------------------------------------------------

    def _feed(self, chunk: bytes) -> None:
        """One chunk of input (b"": its end): events acted on in order, answers in one write."""
        self.conn.max_message_bytes = self.runtime.config.max_message_bytes  # initialize may change it
        self.conn.receive_data(chunk)
        self.writer.hold()
        try:
            while (event := self.conn.next_event()) is not None:
                self._act_safely(event)
        finally:
            self.writer.release()
        # While we wait for the client's own answers (provider/produce), a full in-flight count
        # does not stop reading: those answers must get through, and the calls are time-boxed.
        if self.writer.congested() or (self._full() and self.conn.calls_waiting == 0):
            self.reader.pause()

    def _full(self) -> bool:
        """Too much running to read more: MAX_IN_FLIGHT handlers, or handlers whose lines add up
        to more than max_in_flight_bytes."""
        return len(self._tasks) >= MAX_IN_FLIGHT or self._bytes_in_flight > self.runtime.config.max_in_flight_bytes

    def _resume(self) -> None:
        # Resumed at half of each bound, so a flood is read in batches rather than line by line.
        if self.reader.paused and len(self._tasks) < MAX_IN_FLIGHT // 2 and self._bytes_in_flight <= self.runtime.config.max_in_flight_bytes // 2 and not self.writer.congested():
            self.reader.resume()

    def _room_to_write(self) -> None:
        """Called from the writer thread when its backlog has drained below the low mark."""
        try:
            self._loop.call_soon_threadsafe(self._resume)
        except RuntimeError:
            pass  # the loop is gone

    # ---- events ------------------------------------------------------------------------------

    def _act_safely(self, event: Event) -> None:
        try:
            self._act(event)
        except Exception as exc:  # the last guard of the read path: the process never dies on input
            self.log.error(faults.LOG_EVENT, **faults.fault_fields(exc, getattr(event, "method", None)))
            if isinstance(event, Call) and event.id in self.conn.in_flight and event.id not in self._running:
                self.writer.write(self.conn.send_error(event.id, codes.INTERNAL_ERROR, data=faults.internal_data()))

    def _act(self, event: Event) -> None:
        match event:
            case Send(data):
                self.writer.write(data)
            case Call():
                self._serve(event)
            case Notify(method, params, size):
                self._notified(method, params, size)
            case Cancel(ident) if ident in self._running:
                self._running[ident].cancel()
            case Reply():
                if not self.peer.settle(event):
                    self.log.debug("reply_discarded", known=True)
            case Exit(code):
                self._exit(code)
            case EndOfInput():
                self._spawn(self._on_eof())
            case Diagnostic(level, name, fields):
                self.log.log(level, name, **fields)

    def _serve(self, call: Call) -> None:
        """Answered inline when the handler answers at once (most methods), else by a task."""
        started = time.perf_counter()
        try:
            outcome = start(self.table[call.method], call.params, self.context)
        except RpcFailure as failure:
            self._answer(call, started, failure)
            return
        if isinstance(outcome, dict):
            self._answer(call, started, outcome)
            return
        task = self._spawn(self._finish(call, outcome, started), call.size)
        self._running[call.id] = task
        if call.method == SHUTDOWN_METHOD:
            self._draining = task
        task.add_done_callback(functools.partial(self._answered, call, outcome))

    async def _finish(self, call: Call, pending: Coroutine[Any, Any, dict[str, Any]], started: float) -> None:
        try:
            result: dict[str, Any] | RpcFailure | None = await pending
        except RpcFailure as failure:
            result = failure
        except asyncio.CancelledError:
            result = None
        self._answer(call, started, result)

    def _answered(self, call: Call, pending: Coroutine[Any, Any, Any], task: Task) -> None:
        if self._running.get(call.id) is task:
            del self._running[call.id]
        if task.cancelled():
            # Cancelled before it ever ran: its handler never started, but it is still answered.
            discard(pending)
            self._answer(call, time.perf_counter(), None)

    def _answer(self, call: Call, started: float, outcome: dict[str, Any] | RpcFailure | None) -> None:
        """A result, a failure, or None: cancelled."""
        if outcome is None:
            data, status = self.conn.send_cancelled(call.id), codes.REQUEST_CANCELLED
        elif isinstance(outcome, RpcFailure):
            data, status = self.conn.send_error(call.id, outcome.code, outcome.message, outcome.data), outcome.code
        else:
            data, status = self.conn.send_result(call.id, outcome), 0
        self.writer.write(data)
        if self.log.enabled("debug"):
            elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
            self.log.debug("request", method=call.method[:200], outcome=status or "ok", elapsed_ms=elapsed_ms)

    def _notified(self, method: str, params: Any, size: int = 0) -> None:
        try:
            outcome = start(self.table[method], params, self.context)
        except RpcFailure as failure:  # a notification is never answered; the failure is logged
            self.log.info("notification_failed", method=method, code=failure.code)
            return
        if not isinstance(outcome, dict):
            self._spawn(self._finish_notification(method, outcome), size)

    async def _finish_notification(self, method: str, pending: Coroutine[Any, Any, Any]) -> None:
        try:
            await pending
        except RpcFailure as failure:
            self.log.info("notification_failed", method=method, code=failure.code)

    def _spawn(self, coro: Coroutine[Any, Any, Any], size: int = 0) -> Task:
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        if size:
            self._sizes[task] = size
            self._bytes_in_flight += size
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: Task) -> None:
        self._tasks.discard(task)
        self._bytes_in_flight -= self._sizes.pop(task, 0)
        self._resume()

    # ---- lifecycle -------------------------------------------------------------------------

    async def shutdown(self) -> None:
        self.conn.start_shutdown()
        current = asyncio.current_task()
        others = [t for t in self._running.values() if t is not current]
        if others:
            await asyncio.wait(others)

    def _exit(self, code: int) -> None:
        """`exit` ends the process now, cancelling what runs, unless a `shutdown` is still
        draining: then that drain (bounded by shutdown_deadline_ms) finishes first, so
        `initialize`, `shutdown`, `exit` piped in one write has every request answered."""
        draining = self._draining
        if draining is None or draining.done():
            self._stop(code)
            return
        self.conn.start_shutdown()

        async def after_drain() -> None:
            await asyncio.wait([draining], timeout=self.runtime.config.shutdown_deadline_ms / 1000)
            self._stop(code)

        self._spawn(after_drain())

    def _on_signal(self, event: str) -> None:
        self.log.info(event, in_flight=len(self._running))
        self.conn.start_shutdown()
        self._loop.create_task(self._drain_then_stop())

    def _output_closed(self) -> None:
        """The client closed promptd's stdout: no answer can reach it any more, so promptd ends
        now (status 0) instead of serving requests whose answers are dropped."""
        try:
            self._loop.call_soon_threadsafe(self._closed_by_client)
        except RuntimeError:
            pass  # the loop already ended: promptd is stopping anyway

    def _closed_by_client(self) -> None:
        self.log.info("output_closed", in_flight=len(self._running))
        self.conn.start_shutdown()
        self._stop(0)

    async def _on_eof(self) -> None:
        self.peer.fail_waiting(ConnectionError("client closed its output"))
        await self._drain_then_stop()

    async def _drain_then_stop(self) -> None:
        """Waits for what runs, up to shutdown_deadline_ms; _stop cancels what is left."""
        pending = {t for t in self._tasks if t is not asyncio.current_task()}
        if pending:
            await asyncio.wait(pending, timeout=self.runtime.config.shutdown_deadline_ms / 1000)
        self._stop(0)

    def _stop(self, code: int) -> None:
        """Cancels everything still running (each request still answered -32800), then ends."""
        if self._exit_code is not None:
            return
        self._exit_code = code
        running = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in running:
            task.cancel()

        async def finish() -> None:
            if running:
                await asyncio.wait(running, timeout=STOP_GRACE_S)
            for ident in set(self._running) & self.conn.in_flight:
                # A handler that ignored its cancellation: its request is still answered, once.
                self.writer.write(self.conn.send_cancelled(ident))
            self._done.set()

        self._loop.create_task(finish())


def protect_stdout() -> int:
    """Keeps the real stdout privately and points fd 1 at stderr, so a stray print, a C extension
    or a child process cannot corrupt the protocol stream. Returns the private descriptor."""
    private = os.dup(1)
    os.set_inheritable(private, False)
    os.dup2(2, 1)
    return private


def log_python_warnings(log: Logger) -> None:
    """stderr carries JSON lines only: a Python warning (from promptd or a library) becomes one
    log line with its category and place, never its text, which may quote input."""

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: str | None = None) -> None:
        log.warning("python_warning", category=category.__name__, where=f"{os.path.basename(filename)}:{lineno}")

    warnings.showwarning = show


def serve(runtime: Runtime, on_ready: Callable[[], None] | None = None, table: dict[str, Method] | None = None) -> NoReturn:
    """Serves stdin/stdout, then ends the process at once with the status. The answers are already
    written (the writer flushed them); a worker thread still busy with a cancelled request must not
    keep the process alive, as interpreter shutdown would (it joins every worker thread)."""
    out_fd = protect_stdout()
    log_python_warnings(runtime.log)
    if on_ready is not None:
        on_ready()
    code = Server(runtime, 0, out_fd, table=table).run()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
