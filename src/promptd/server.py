"""The stdio transport: the only module that touches stdin/stdout and runs the event loop.

Threads do the blocking I/O (a reader feeding lines to the loop, a writer draining one queue of
frames to the protocol descriptor), so a slow client never stalls the loop and the loop never
blocks on a pipe. Everything protocol-shaped comes from promptd.rpc; everything domain-shaped
from promptd.methods.
"""

from __future__ import annotations

import asyncio
import functools
import os
import select
import signal
import stat
import threading
import time
import traceback
from collections.abc import Callable, Coroutine
from typing import Any

from promptd.app import Runtime
from promptd.methods import TABLE
from promptd.methods.base import Context, Method
from promptd.methods.boundary import RpcFailure, start
from promptd.rpc import codes
from promptd.rpc.framing import LineFramer, Oversize, peek_request_id
from promptd.rpc.messages import (
    Id,
    Invalid,
    Notification,
    Request,
    Response,
    decode,
    encode,
    error_frame,
    notification_frame,
    result_frame,
)
from promptd.rpc.outgoing import OutgoingCalls

READ_CHUNK = 1 << 16
# Requests running at once before the reader waits: bounds memory under a flood without ever
# refusing a well-behaved client.
MAX_IN_FLIGHT = 1024
CANCEL_METHOD = "$/cancelRequest"
# Answers written but not yet read by the client: above the high mark reading pauses, below the
# low mark it resumes. Bounds memory when a client stops reading yet keeps sending.
BACKLOG_HIGH = 32 << 20
BACKLOG_LOW = 8 << 20
SWEEP_FIRST_DELAY_S = 1.0
# Retention is counted in hours (24 by default): sweeping hourly keeps files at most an hour late.
SWEEP_INTERVAL_S = 3600.0


class ClientError(Exception):
    """The client answered a server-to-client request with an error."""

    def __init__(self, error: Any) -> None:
        super().__init__("client returned an error")
        self.error = error


def cancelled_frame(ident: Id) -> dict[str, Any]:
    return error_frame(ident, codes.REQUEST_CANCELLED, data={"kind": "cancelled"})


def failure_frame(ident: Id, failure: RpcFailure) -> dict[str, Any]:
    return error_frame(ident, failure.code, failure.message, failure.data)


class FrameWriter:
    """The single writer of the protocol descriptor.

    On a pipe or socket the descriptor is non-blocking and a frame is written at once from the
    caller's thread when nothing is waiting (no thread hop on the hot path); whatever does not fit
    becomes a backlog that one writer thread drains in order as the client reads. Any other
    descriptor (a file, a terminal, which must not be made non-blocking) is always written by the
    writer thread. Either way frames leave in the order they were sent and coalesce under load.
    """

    def __init__(self, fd: int, on_room: Callable[[], None] | None = None) -> None:
        self.fd = fd
        self._on_room = on_room
        self._pending_bytes = 0
        self._over_high = False
        mode = os.fstat(fd).st_mode
        self._direct = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        if self._direct:
            os.set_blocking(fd, False)
        self._lock = threading.Lock()
        self._backlog = bytearray()
        self._wake = threading.Condition(self._lock)
        self._closing = False
        self._broken = False
        self._draining = False
        # Frames collected while the loop handles one chunk of input (loop thread only).
        self._held: list[bytes] | None = None
        self._thread = threading.Thread(target=self._run, name="promptd-writer", daemon=True)
        self._thread.start()

    def hold(self) -> None:
        """Collects frames instead of writing each: one write for a whole chunk of requests."""
        self._held = []

    def release(self) -> None:
        held, self._held = self._held, None
        if held:
            self._send_bytes(b"".join(held))

    def send(self, frame: Any) -> None:
        data = encode(frame)
        if self._held is not None:
            self._held.append(data)
            return
        self._send_bytes(data)

    def _send_bytes(self, data: bytes) -> None:
        with self._lock:
            if self._broken:
                return
            if self._direct and not self._backlog and not self._draining:
                data = self._write_some(data)
                if not data:
                    return
            self._backlog += data
            self._pending_bytes += len(data)
            if self._pending_bytes > BACKLOG_HIGH:
                # Sticky until the backlog falls below the low mark, however the thread's drains
                # happen to be cut: the reader paused on it waits for that one signal.
                self._over_high = True
            self._wake.notify()

    def congested(self) -> bool:
        """Unread answers went over the high mark and have not yet fallen below the low mark: the
        reader should not take requests."""
        return self._over_high

    def close(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._closing = True
            self._wake.notify()
        self._thread.join(timeout)

    def _write_some(self, data: bytes) -> bytes:
        """Writes what the descriptor takes now; returns the rest. Called with the lock held."""
        try:
            written = os.write(self.fd, data)
        except BlockingIOError:
            return data
        except OSError:
            self._broken = True  # the client went away; frames are dropped, nothing blocks
            return b""
        return data[written:]

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._backlog and not self._closing:
                    self._wake.wait()
                if not self._backlog or self._broken:
                    return
                pending = bytes(self._backlog)
                self._backlog.clear()
                # While the thread writes outside the lock, senders must queue, not write.
                self._draining = True
            self._drain(pending)
            with self._lock:
                self._draining = False
                self._pending_bytes -= len(pending)
                room = self._over_high and self._pending_bytes <= BACKLOG_LOW
                if room:
                    self._over_high = False
            if room and self._on_room is not None:
                self._on_room()

    def _drain(self, data: bytes) -> None:
        """Writes `data` fully, waiting for the descriptor to take it."""
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                select.select([], [self.fd], [], 1.0)
                continue
            except OSError:
                self._broken = True
                return
            view = view[written:]


class Server:
    def __init__(self, runtime: Runtime, in_fd: int, out_fd: int, table: dict[str, Method] | None = None) -> None:
        self.runtime = runtime
        self.log = runtime.log
        self.table = table if table is not None else TABLE
        self.in_fd = in_fd
        self.writer = FrameWriter(out_fd, on_room=self._room_to_write)
        self.framer = LineFramer(runtime.config.max_message_bytes)
        self.outgoing = OutgoingCalls()
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._inflight: dict[Id, asyncio.Task[Any]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._shutdown_requested = False
        self._stopping = False
        self._cancelling = False
        self._exit_code: int | None = None
        self._done: asyncio.Event
        self._loop: asyncio.AbstractEventLoop
        self._reader: asyncio.ReadTransport | None = None
        self._paused = False
        self._room: threading.Event | None = None
        self.context = Context(runtime=runtime, peer=self, lifecycle=self)

    # ---- running ---------------------------------------------------------------------------

    def run(self) -> int:
        return asyncio.run(self._main())

    async def _main(self) -> int:
        self._loop = asyncio.get_running_loop()
        self._done = asyncio.Event()
        try:
            self._loop.add_signal_handler(signal.SIGTERM, self._on_sigterm)
        except (NotImplementedError, RuntimeError):
            pass
        self.log.info("started", pid=os.getpid(), max_message_bytes=self.runtime.config.max_message_bytes)
        await self._start_reading()
        sweeper = self._loop.create_task(self._sweep_spill())
        await self._done.wait()
        sweeper.cancel()
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

    async def _start_reading(self) -> None:
        """Pipes and sockets are read by the event loop itself (no thread hop per request);
        anything else (a regular file, a terminal, which must not be made non-blocking) by a
        reader thread."""
        mode = os.fstat(self.in_fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            pipe = os.fdopen(os.dup(self.in_fd), "rb", buffering=0)
            await self._loop.connect_read_pipe(lambda: _StdinProtocol(self), pipe)
            return
        self._room = threading.Event()
        self._room.set()
        threading.Thread(target=self._read_loop, name="promptd-reader", daemon=True).start()

    def _read_loop(self) -> None:
        """Reader thread: blocking reads handed to the loop; waits while too many requests are
        in flight (back-pressure)."""
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
        if self._stopping:
            return
        if not chunk:
            for line in self.framer.close():
                self._on_line_safely(line)
            self._loop.create_task(self._on_eof())
            return
        self.framer.max_line_bytes = self.runtime.config.max_message_bytes
        self.writer.hold()
        try:
            for line in self.framer.feed(chunk):
                self._on_line_safely(line)
                if self._stopping:
                    return
        finally:
            self.writer.release()
        if self._overloaded():
            self._pause()

    def _overloaded(self) -> bool:
        """Too many requests in flight, or too many answers the client has not read yet. While the
        server waits for the client's own answers (provider/produce), a full in-flight count does
        not stop reading: those answers must get through, and the calls are time-boxed."""
        if self.writer.congested():
            return True
        return len(self._tasks) >= MAX_IN_FLIGHT and len(self.outgoing) == 0

    def _pause(self) -> None:
        if self._reader is not None:
            self._reader.pause_reading()
            self._paused = True
        elif self._room is not None:
            self._room.clear()

    def _resume(self) -> None:
        if len(self._tasks) >= MAX_IN_FLIGHT // 2 or self.writer.congested():
            return
        if self._paused and self._reader is not None:
            self._paused = False
            self._reader.resume_reading()
        elif self._room is not None and not self._room.is_set():
            self._room.set()

    def _on_line_safely(self, line: bytes | Oversize) -> None:
        """One line's fault stays that line's: it is answered -32603 (id null) and logged, and the
        lines after it are served."""
        try:
            self._on_line(line)
        except Exception as exc:  # the last guard of the read path: the process never dies on input
            self.log.error("internal_error", method=None, exception=type(exc).__name__, traceback="".join(traceback.format_exception(exc)))
            self.writer.send(error_frame(None, codes.INTERNAL_ERROR, data={"kind": "internal"}))

    def _on_line(self, line: bytes | Oversize) -> None:
        if isinstance(line, Oversize):
            self._refuse_oversize(line)
            return
        if not line.strip():
            return  # blank lines between frames are tolerated, as most line protocols do
        decoded = decode(line)
        if decoded.batch:
            self._spawn(self._answer_batch(decoded.messages))
            return
        message = decoded.messages[0]
        if isinstance(message, Request):
            self._serve(message)
        elif isinstance(message, Notification):
            self._take_notification(message)
        elif isinstance(message, Response):
            self._settle(message)
        else:
            self.writer.send(message.frame)

    def _refuse_oversize(self, line: Oversize) -> None:
        """Answered -32600 with the request's id when its first bytes show it for certain (so a
        client waiting for that id is not left waiting), else id null. An id still in flight is
        never echoed: that answer would be taken for the running request's."""
        ident = peek_request_id(line.head)
        if ident is not None and ident in self._inflight:
            ident = None
        self.log.warning("line_too_long", bytes=line.size, limit=self.framer.max_line_bytes, with_id=ident is not None)
        self.writer.send(error_frame(ident, codes.INVALID_REQUEST, "Message too large", {"kind": "too_large", "limit": self.framer.max_line_bytes}))

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        self._resume()

    def _room_to_write(self) -> None:
        """Called from the writer thread when its backlog has drained below the low mark."""
        try:
            self._loop.call_soon_threadsafe(self._resume)
        except RuntimeError:
            pass  # the loop is gone

    # ---- requests ----------------------------------------------------------------------------

    def _serve(self, request: Request) -> None:
        """A request outside a batch: answered inline when its handler answers at once (most
        methods), by a task of its own when it has to wait."""
        started = time.perf_counter()
        outcome = self._begin(request)
        if isinstance(outcome, dict):
            self._log_request(request, outcome, started)
            self.writer.send(outcome)
            return
        task = self._spawn(self._finish(request, outcome))
        self._inflight[request.id] = task
        task.add_done_callback(functools.partial(self._answered, request.id, outcome))

    def _answered(self, ident: Id, pending: Coroutine[Any, Any, Any], task: asyncio.Task[Any]) -> None:
        if self._inflight.get(ident) is task:
            del self._inflight[ident]
        if task.cancelled():
            # Cancelled before it ever ran: its handler never started, but it is still answered.
            pending.close()
            self.writer.send(cancelled_frame(ident))
        else:
            self.writer.send(task.result())

    def _begin(self, request: Request) -> dict[str, Any] | Coroutine[Any, Any, dict[str, Any]]:
        """Checks and starts a request: its final frame, or a coroutine that finishes it."""
        if request.id in self._inflight:
            return error_frame(None, codes.INVALID_REQUEST, "Request id is already in flight", {"kind": "duplicate_id", "id": request.id})
        method = self.table.get(request.method)
        if method is None or method.notification:
            return error_frame(request.id, codes.METHOD_NOT_FOUND, data={"kind": "method_not_found", "method": request.method[:200]})
        if self._shutdown_requested:
            return error_frame(request.id, codes.SERVER_SHUT_DOWN, data={"kind": "shut_down"})
        if self._cancelling:
            return cancelled_frame(request.id)
        if method.name == "shutdown":
            # Marked now, not when its handler first runs: a second shutdown (or any request) in
            # the same chunk is refused instead of being waited for, which could never end.
            self._shutdown_requested = True
        try:
            outcome = start(method, request.params, self.context)
        except RpcFailure as failure:
            return failure_frame(request.id, failure)
        if isinstance(outcome, dict):
            return result_frame(request.id, outcome)
        return outcome

    async def _finish(self, request: Request, pending: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            frame = result_frame(request.id, await pending)
        except RpcFailure as failure:
            frame = failure_frame(request.id, failure)
        except asyncio.CancelledError:
            frame = cancelled_frame(request.id)
        self._log_request(request, frame, started)
        return frame

    def _log_request(self, request: Request, frame: dict[str, Any], started: float) -> None:
        if self.log.enabled("debug"):
            outcome = frame["error"]["code"] if "error" in frame else "ok"
            self.log.debug("request", method=request.method[:200], outcome=outcome, elapsed_ms=round((time.perf_counter() - started) * 1000, 3))

    async def _answer_batch(self, messages: list[Any]) -> None:
        frames = await asyncio.gather(*(self._batch_member(m) for m in messages))
        replies = [f for f in frames if f is not None]
        if replies:
            self.writer.send(replies)

    async def _batch_member(self, message: Any) -> dict[str, Any] | None:
        if isinstance(message, Invalid):
            return message.frame
        if isinstance(message, Response):
            self._settle(message)
            return None
        if isinstance(message, Notification):
            self._take_notification(message)
            return None
        outcome = self._begin(message)
        if isinstance(outcome, dict):
            return outcome
        # Each batch member runs in its own task (gather's), registered for cancellation in the
        # same step that checked its id, so a duplicate cannot slip in between.
        task = asyncio.current_task()
        assert task is not None  # always inside gather's task here; not input validation
        self._inflight[message.id] = task
        try:
            return await self._finish(message, outcome)
        finally:
            if self._inflight.get(message.id) is task:
                del self._inflight[message.id]

    # ---- notifications -------------------------------------------------------------------------

    def _take_notification(self, note: Notification) -> None:
        if note.method == CANCEL_METHOD:
            target = note.params.get("id") if isinstance(note.params, dict) else None
            task = self._inflight.get(target) if isinstance(target, (str, int)) and not isinstance(target, bool) else None
            if task is not None:
                task.cancel()
            return
        if note.method == "exit":
            self._stop(0 if self._shutdown_requested else 1)
            return
        method = self.table.get(note.method)
        if method is None or method.lifecycle or self._shutdown_requested:
            self.log.debug("notification_ignored", method=note.method[:200])
            return
        try:
            outcome = start(method, note.params, self.context)
        except RpcFailure as failure:
            # A notification is never answered; the failure is only logged (metadata).
            self.log.info("notification_failed", method=note.method, code=failure.code)
            return
        if not isinstance(outcome, dict):
            self._spawn(self._finish_notification(note.method, outcome))

    async def _finish_notification(self, method: str, pending: Coroutine[Any, Any, Any]) -> None:
        try:
            await pending
        except RpcFailure as failure:
            self.log.info("notification_failed", method=method, code=failure.code)
        except asyncio.CancelledError:
            pass

    # ---- lifecycle -------------------------------------------------------------------------

    async def shutdown(self) -> None:
        self._shutdown_requested = True
        current = asyncio.current_task()
        others = [t for t in self._inflight.values() if t is not current]
        if others:
            await asyncio.wait(others)

    async def _on_eof(self) -> None:
        self._fail_waiting(ConnectionError("client closed its output"))
        await self._drain(None)
        self._stop(0)

    def _on_sigterm(self) -> None:
        self.log.info("sigterm", in_flight=len(self._inflight))
        deadline = self.runtime.config.shutdown_deadline_ms / 1000
        self._loop.create_task(self._drain_then_stop(deadline))

    async def _drain_then_stop(self, deadline: float) -> None:
        self._shutdown_requested = True
        await self._drain(deadline)
        self._stop(0)

    async def _drain(self, deadline: float | None) -> None:
        """Waits for every running request (up to `deadline` seconds), then cancels the requests
        still running, each of which is still answered (-32800)."""
        pending = {t for t in self._tasks if t is not asyncio.current_task()}
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=deadline)
        if late:
            self._cancel_requests()
            await asyncio.wait(late)

    def _cancel_requests(self) -> None:
        """Cancels every request in flight and answers any that would start later at once."""
        self._cancelling = True
        for task in list(self._inflight.values()):
            task.cancel()

    def _stop(self, code: int) -> None:
        if self._stopping:
            return
        self._stopping = True
        self._exit_code = code
        self._cancel_requests()
        running = [t for t in self._tasks if t is not asyncio.current_task()]

        async def finish() -> None:
            if running:
                await asyncio.wait(running)
            self._done.set()

        self._loop.create_task(finish())

    # ---- the client as a peer: server-to-client requests and events --------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.writer.send(notification_frame(method, params))

    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> Any:
        call_id, frame = self.outgoing.start(method, params)
        future: asyncio.Future[Any] = self._loop.create_future()
        self._waiting[call_id] = future
        self.writer.send(frame)
        try:
            return await asyncio.wait_for(future, timeout_s)
        finally:
            self._waiting.pop(call_id, None)
            self.outgoing.forget(call_id)
            if not future.done() or future.cancelled():
                # We stopped waiting (timeout, cancellation): tell the client, so a host handler
                # can stop its work too, the way a client cancels ours.
                self.writer.send(notification_frame(CANCEL_METHOD, {"id": call_id}))

    def _settle(self, response: Response) -> None:
        call_id = self.outgoing.settle(response)
        future = self._waiting.get(call_id) if call_id else None
        if future is None or future.done():
            self.log.debug("reply_discarded", known=call_id is not None)
            return
        if response.error is not None:
            future.set_exception(ClientError(response.error))
        else:
            future.set_result(response.result)

    def _fail_waiting(self, exc: Exception) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(exc)


class _StdinProtocol(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.server._reader = transport  # type: ignore[assignment]

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


def serve(runtime: Runtime, on_ready: Callable[[], None] | None = None) -> int:
    out_fd = protect_stdout()
    if on_ready is not None:
        on_ready()
    return Server(runtime, 0, out_fd).run()
