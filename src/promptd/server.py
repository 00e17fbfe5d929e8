"""The stdio transport: the only module that reads stdin, runs the event loop and ends the process.

Every protocol rule (lifecycle, in-flight ids, batches, cancellation, refusals) is in
promptd.rpc.connection, which this module feeds bytes and whose events it acts on: it runs
handlers (inline, as tasks, or in worker threads), writes the frames the connection returns through
the one FrameWriter (promptd.writer), and owns signals, back-pressure and the spill sweep's timer.
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import stat
import sys
import threading
import time
import traceback
from collections.abc import Callable, Coroutine
from typing import Any, NoReturn

from promptd.app import Runtime
from promptd.methods import TABLE
from promptd.methods.base import Context, Method
from promptd.methods.boundary import RpcFailure, start
from promptd.rpc import codes
from promptd.rpc.connection import Call, Cancel, Connection, Diagnostic, EndOfInput, Event, Exit, Notify, Reply, Send
from promptd.writer import FrameWriter

READ_CHUNK = 1 << 16
# Requests running at once before the reader waits: bounds memory under a flood without ever
# refusing a well-behaved client.
MAX_IN_FLIGHT = 1024
SWEEP_FIRST_DELAY_S = 1.0
# Retention is counted in hours (24 by default): sweeping hourly keeps files at most an hour late.
SWEEP_INTERVAL_S = 3600.0
# After cancelling what still runs at exit, how long its answers (-32800) may take to be written.
# A task that ignores cancellation cannot hold the process longer than this.
STOP_GRACE_S = 1.0

Task = asyncio.Task[Any]


class ClientError(Exception):
    """The client answered a server-to-client request with an error."""

    def __init__(self, error: Any) -> None:
        super().__init__("client returned an error")
        self.error = error


class Server:
    def __init__(self, runtime: Runtime, in_fd: int, out_fd: int, table: dict[str, Method] | None = None) -> None:
        self.runtime = runtime
        self.log = runtime.log
        self.table = table if table is not None else TABLE
        self.in_fd = in_fd
        self.conn = Connection(self.table, runtime.config.max_message_bytes)
        self.writer = FrameWriter(out_fd, on_room=self._room_to_write)
        self.context = Context(runtime=runtime, peer=self, lifecycle=self)
        self._tasks: set[Task] = set()  # every running handler, requests and notifications
        self._running: dict[Any, Task] = {}  # request id -> its task, for cancellation
        self._waiting: dict[str, asyncio.Future[Any]] = {}  # our calls to the client
        self._exit_code: int | None = None
        self._loop: asyncio.AbstractEventLoop
        self._loop_thread = 0
        self._done: asyncio.Event
        self._reader: asyncio.ReadTransport | None = None
        self._room = threading.Event()  # the reader thread's go-ahead (back-pressure)
        self._room.set()

    def run(self) -> int:
        """Serves until exit, end of input or SIGTERM; returns the exit status. Worker threads still
        busy are not waited for (asyncio.run would): serve() then ends the process without them."""
        loop = asyncio.new_event_loop()
        try:
            return loop.run_until_complete(self._main())
        finally:
            loop.close()  # shuts the default executor down without waiting for its threads

    async def _main(self) -> int:
        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        try:
            self._loop.add_signal_handler(signal.SIGTERM, self._on_sigterm)
        except (NotImplementedError, RuntimeError):
            pass
        self._loop_thread = threading.get_ident()
        self.log.info("started", pid=os.getpid(), max_message_bytes=self.runtime.config.max_message_bytes)
        await self._start_reading()
        sweeper = self._loop.create_task(self._sweep_spill())
        await self._done.wait()
        sweeper.cancel()
        await asyncio.wait([sweeper])
        self.writer.close()
        code = self._exit_code if self._exit_code is not None else 0
        self.log.info("stopped", exit_code=code)
        return code

    async def _sweep_spill(self) -> None:
        """Removes expired spill files shortly after start-up and then hourly, in a worker thread.
        The short delay keeps the sweep out of the cold start's way."""
        await asyncio.sleep(SWEEP_FIRST_DELAY_S)
        while True:
            try:
                removed = await asyncio.to_thread(self.runtime.sweep_spill)
                if removed:
                    self.log.info("spill_swept", removed=removed)
            except Exception as exc:  # a sweep failure must never take the server down
                self.log.warning("spill_sweep_failed", exception=type(exc).__name__)
            await asyncio.sleep(SWEEP_INTERVAL_S)

    # ---- reading ---------------------------------------------------------------------------

    async def _start_reading(self) -> None:
        """Pipes and sockets are read by the event loop itself (no thread hop per request);
        anything else (a regular file, a terminal, which must not be made non-blocking) by a
        reader thread."""
        mode = os.fstat(self.in_fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            pipe = os.fdopen(os.dup(self.in_fd), "rb", buffering=0)
            await self._loop.connect_read_pipe(lambda: _StdinProtocol(self), pipe)
            return
        threading.Thread(target=self._read_loop, name="promptd-reader", daemon=True).start()

    def _read_loop(self) -> None:
        while True:
            self._room.wait()
            try:
                chunk = os.read(self.in_fd, READ_CHUNK)
            except OSError:
                chunk = b""
            try:
                self._loop.call_soon_threadsafe(self._feed, chunk)
            except RuntimeError:
                return  # the loop is gone
            if not chunk:
                return

    def _feed(self, chunk: bytes) -> None:
        """One chunk of input: its events acted on in order, its answers coalesced into one write."""
        self.conn.max_message_bytes = self.runtime.config.max_message_bytes
        self.conn.receive_data(chunk)
        self.writer.hold()
        try:
            while (event := self.conn.next_event()) is not None:
                self._act_safely(event)
        finally:
            self.writer.release()
        if self.writer.congested() or (len(self._tasks) >= MAX_IN_FLIGHT and self.conn.calls_waiting == 0):
            # While we wait for the client's own answers (provider/produce), a full in-flight count
            # does not stop reading: those answers must get through, and the calls are time-boxed.
            self._pause()

    def _pause(self) -> None:
        if self._reader is not None:
            self._reader.pause_reading()
        self._room.clear()

    def _resume(self) -> None:
        if len(self._tasks) >= MAX_IN_FLIGHT // 2 or self.writer.congested() or self._room.is_set():
            return
        self._room.set()
        if self._reader is not None:
            self._reader.resume_reading()

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
            trace = "".join(traceback.format_exception(exc))
            self.log.error("internal_error", method=getattr(event, "method", None), exception=type(exc).__name__, traceback=trace)
            if isinstance(event, Call) and event.id in self.conn.in_flight and event.id not in self._running:
                self.writer.write(self.conn.send_error(event.id, codes.INTERNAL_ERROR, data={"kind": "internal"}))

    def _act(self, event: Event) -> None:
        if isinstance(event, Send):
            self.writer.write(event.data)
        elif isinstance(event, Call):
            self._serve(event)
        elif isinstance(event, Notify):
            self._notified(event)
        elif isinstance(event, Cancel):
            task = self._running.get(event.id)
            if task is not None:
                task.cancel()
        elif isinstance(event, Reply):
            self._settle(event)
        elif isinstance(event, Exit):
            self._stop(event.code)
        elif isinstance(event, EndOfInput):
            self._spawn(self._on_eof())
        elif isinstance(event, Diagnostic):
            self.log.log(event.level, event.event, **event.fields)

    def _serve(self, call: Call) -> None:
        """Answered inline when the handler answers at once (most methods), else by a task."""
        started = time.perf_counter()
        try:
            outcome = start(self.table[call.method], call.params, self.context)
        except RpcFailure as failure:
            self._answer(call, started, failure=failure)
            return
        if isinstance(outcome, dict):
            self._answer(call, started, result=outcome)
            return
        task = self._spawn(self._finish(call, outcome, started))
        self._running[call.id] = task
        task.add_done_callback(functools.partial(self._answered, call, outcome))

    async def _finish(self, call: Call, pending: Coroutine[Any, Any, dict[str, Any]], started: float) -> None:
        try:
            result = await pending
        except RpcFailure as failure:
            self._answer(call, started, failure=failure)
        except asyncio.CancelledError:
            self._answer(call, started, cancelled=True)
        else:
            self._answer(call, started, result=result)

    def _answered(self, call: Call, pending: Coroutine[Any, Any, Any], task: Task) -> None:
        if self._running.get(call.id) is task:
            del self._running[call.id]
        if task.cancelled():
            # Cancelled before it ever ran: its handler never started, but it is still answered.
            pending.close()
            self._answer(call, time.perf_counter(), cancelled=True)

    def _answer(self, call: Call, started: float, *, result: Any = None, failure: RpcFailure | None = None, cancelled: bool = False) -> None:
        if cancelled:
            data, outcome = self.conn.send_cancelled(call.id), codes.REQUEST_CANCELLED
        elif failure is not None:
            data, outcome = self.conn.send_error(call.id, failure.code, failure.message, failure.data), failure.code
        else:
            data, outcome = self.conn.send_result(call.id, result), 0
        self.writer.write(data)
        if self.log.enabled("debug"):
            self.log.debug("request", method=call.method[:200], outcome=outcome or "ok", elapsed_ms=round((time.perf_counter() - started) * 1000, 3))

    def _notified(self, note: Notify) -> None:
        try:
            outcome = start(self.table[note.method], note.params, self.context)
        except RpcFailure as failure:  # a notification is never answered; the failure is logged
            self.log.info("notification_failed", method=note.method, code=failure.code)
            return
        if not isinstance(outcome, dict):
            self._spawn(self._finish_notification(note.method, outcome))

    async def _finish_notification(self, method: str, pending: Coroutine[Any, Any, Any]) -> None:
        try:
            await pending
        except RpcFailure as failure:
            self.log.info("notification_failed", method=method, code=failure.code)

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> Task:
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: Task) -> None:
        self._tasks.discard(task)
        self._resume()

    # ---- lifecycle -------------------------------------------------------------------------

    async def shutdown(self) -> None:
        self.conn.start_shutdown()
        current = asyncio.current_task()
        others = [t for t in self._running.values() if t is not current]
        if others:
            await asyncio.wait(others)

    def _on_sigterm(self) -> None:
        self.log.info("sigterm", in_flight=len(self._running))
        self.conn.start_shutdown()
        self._loop.create_task(self._drain_then_stop())

    async def _on_eof(self) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("client closed its output"))
        await self._drain_then_stop()

    async def _drain_then_stop(self) -> None:
        """Waits for what runs, up to shutdown_deadline_ms; _stop then cancels what is left (each
        request still answered -32800)."""
        pending = {t for t in self._tasks if t is not asyncio.current_task()}
        if pending:
            await asyncio.wait(pending, timeout=self.runtime.config.shutdown_deadline_ms / 1000)
        self._stop(0)

    def _stop(self, code: int) -> None:
        if self._exit_code is not None:
            return
        self._exit_code = code
        running = [t for t in self._tasks if t is not asyncio.current_task()]
        for task in running:
            task.cancel()

        async def finish() -> None:
            if running:
                # A handler in a worker thread is not waited for: its task ends when cancelled.
                await asyncio.wait(running, timeout=STOP_GRACE_S)
            self._done.set()

        self._loop.create_task(finish())

    # ---- the client as a peer: server-to-client requests and events --------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        data = self.conn.send_notification(method, params)
        if threading.get_ident() == self._loop_thread:
            self.writer.write(data)
        else:  # from a worker thread: the loop's thread owns the writer's order
            self._loop.call_soon_threadsafe(self.writer.write, data)

    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> Any:
        call_id, data = self.conn.start_call(method, params)
        future: asyncio.Future[Any] = self._loop.create_future()
        self._waiting[call_id] = future
        self.writer.write(data)
        try:
            return await asyncio.wait_for(future, timeout_s)
        finally:
            self._waiting.pop(call_id, None)
            self.writer.write(self.conn.end_call(call_id, answered=future.done() and not future.cancelled()))

    def _settle(self, reply: Reply) -> None:
        future = self._waiting.get(reply.call_id)
        if future is None or future.done():
            self.log.debug("reply_discarded", known=True)
        elif reply.error is not None:
            future.set_exception(ClientError(reply.error))
        else:
            future.set_result(reply.result)


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)  # connect_read_pipe's; not input
        self.server._reader = transport

    def data_received(self, data: bytes) -> None:
        self.server._feed(data)

    def eof_received(self) -> bool:
        self.server._feed(b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self.server._feed(b"")


def protect_stdout() -> int:
    """Keeps the real stdout privately and points fd 1 at stderr, so a stray print, a C extension
    or a child process cannot corrupt the protocol stream. Returns the private descriptor."""
    private = os.dup(1)
    os.set_inheritable(private, False)
    os.dup2(2, 1)
    return private


def serve(runtime: Runtime, on_ready: Callable[[], None] | None = None, table: dict[str, Method] | None = None) -> NoReturn:
    """Serves stdin/stdout, then ends the process at once with the status: answers are already
    written (the writer flushed them) and a worker thread still busy with a cancelled request must
    not keep the process alive, as interpreter shutdown would (it joins every worker thread)."""
    out_fd = protect_stdout()
    if on_ready is not None:
        on_ready()
    code = Server(runtime, 0, out_fd, table=table).run()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
