"""The protocol's state machine, sans-IO (the way h11 does HTTP): bytes in, events and frames out.

Protocol layer: no asyncio, threads, os or sys, nothing from promptd's domains. The transport
feeds what it reads (`receive_data`, with b"" for end of input), takes events one at a time
(`next_event`) and acts on them, and writes the bytes the connection hands back. Every protocol
rule lives here, once: the lifecycle (shutdown, exit, end of input), the in-flight id table
(duplicate ids refused for requests and batch members alike, `$/cancelRequest` resolved against
it), batch assembly (a batch's answers leave as one frame), unknown methods, and lines over the
size limit.

Events are handed out one at a time so the transport answers a request before the next line is
read: an id answered inline is free again for the line after it, as a client pipelining would
expect.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol

from promptd.rpc import codes, faults
from promptd.rpc.codes import TransportKind
from promptd.rpc.framing import LineFramer, Oversize, peek_request_id
from promptd.rpc.messages import (
    Id,
    Invalid,
    Message,
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

CANCEL_METHOD = "$/cancelRequest"
EXIT_METHOD = "exit"
SHUTDOWN_METHOD = "shutdown"
# Longest method name echoed back in an error or a log record: enough to recognise it, bounded
# whatever a client sends.
MAX_ECHOED_METHOD = 200

Frame = dict[str, Any]


class KnownMethod(Protocol):
    """What the connection needs to know of a method in the table (promptd.methods.base.Method)."""

    @property
    def notification(self) -> bool: ...

    @property
    def lifecycle(self) -> bool: ...


class State(enum.StrEnum):
    # Requests are served. `initialize` is optional, so there is no state before it.
    RUNNING = "running"
    # `shutdown` was received (or the transport was told to stop, SIGTERM): requests are refused
    # -32002, notifications other than exit and cancellation are ignored; what runs goes on.
    SHUTTING_DOWN = "shutting_down"
    # `exit` was received or input ended: nothing more is read. Requests already in flight are
    # still answered (finished or cancelled) by the transport.
    CLOSED = "closed"


# ---- events --------------------------------------------------------------------------------
# Immutable records as NamedTuples (as the messages in messages.py): a frozen dataclass costs
# about a millisecond to define at every start and an object.__setattr__ per field per event.


class Send(NamedTuple):
    """Bytes the connection answered by itself (a refusal, a batch answered at once): write them."""

    data: bytes


class Call(NamedTuple):
    """A request to run. Answer it exactly once with send_result, send_error or send_cancelled.
    `size` is the bytes of the line it came in (a batch member's share of its line): what its
    params weigh while it runs, for the transport's back-pressure."""

    id: Id
    method: str
    params: Any
    size: int = 0


class Notify(NamedTuple):
    """A notification to run; it is never answered. `size` as Call's."""

    method: str
    params: Any
    size: int = 0


class Cancel(NamedTuple):
    """The client cancelled request `id`, which is in flight: stop it, answer with send_cancelled."""

    id: Id


class Reply(NamedTuple):
    """The client answered our call `call_id` (started with start_call); `waiter` is what the
    caller handed to start_call."""

    call_id: str
    result: Any
    error: Any
    waiter: Any = None


class Exit(NamedTuple):
    """The client sent `exit`: stop every request, then end with `code` (0 after shutdown, else 1)."""

    code: int


class EndOfInput:
    """Input ended: finish what is in flight, flush, end with 0."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "EndOfInput()"


class Diagnostic(NamedTuple):
    """Something for the log (metadata only): `level`, `event` and its fields."""

    level: str
    event: str
    fields: dict[str, Any]


Event = Send | Call | Notify | Cancel | Reply | Exit | EndOfInput | Diagnostic


class ProtocolUsageError(Exception):
    """The transport answered an id that is not in flight: a bug in the caller, never input."""


class _Batch:
    """The answers of one batch line, in member order; sent once the last one is in."""

    __slots__ = ("slots", "waiting")

    def __init__(self, slots: list[Frame | None]) -> None:
        self.slots = slots
        self.waiting = 0


def refusal(methods: Mapping[str, KnownMethod], name: str, state: State) -> tuple[int, dict[str, Any]] | None:
    """Why a request for `name` is refused before it runs, as the error's code and data; None
    when it may run. The rules of the method table and of the lifecycle, for the wire and for the
    in-process door (promptd.local) alike."""
    method = methods.get(name)
    if method is None or method.notification:
        return codes.METHOD_NOT_FOUND, {"kind": TransportKind.METHOD_NOT_FOUND, "method": name[:MAX_ECHOED_METHOD]}
    if state is State.SHUTTING_DOWN:
        return codes.SERVER_SHUT_DOWN, {"kind": TransportKind.SHUT_DOWN}
    return None


class Connection:
    def __init__(self, methods: Mapping[str, KnownMethod], max_message_bytes: int) -> None:
        self.methods = methods
        self.state = State.RUNNING
        self.exit_code: int | None = None
        self._framer = LineFramer(max_message_bytes)
        self._lines: deque[bytes | Oversize] = deque()
        self._events: deque[Event] = deque()
        self._eof = False
        # Requests handed to the transport (Call events) and not yet answered: id -> the batch it
        # belongs to and its slot there, or None for a request on its own line.
        self._in_flight: dict[Id, tuple[_Batch, int] | None] = {}
        self._outgoing = OutgoingCalls()
        # The bytes each message of the line being read is counted for (Call.size).
        self._share = 0

    # ---- input -------------------------------------------------------------------------------

    @property
    def max_message_bytes(self) -> int:
        return self._framer.max_line_bytes

    @max_message_bytes.setter
    def max_message_bytes(self, limit: int) -> None:
        # `initialize` may change the limit; it applies from the next bytes read.
        self._framer.max_line_bytes = limit

    def receive_data(self, data: bytes) -> None:
        """Bytes read from the client; b"" means the input ended."""
        if self._eof or self.state is State.CLOSED:
            return
        if data:
            self._lines.extend(self._framer.feed(data))
            return
        self._eof = True
        self._lines.extend(self._framer.close())

    def next_event(self) -> Event | None:
        """The next event, or None when more bytes are needed (or nothing more will be read)."""
        while not self._events:
            if self.state is State.CLOSED or not self._lines:
                if self._eof and self.state is not State.CLOSED:
                    self.state = State.CLOSED
                    self.exit_code = 0
                    return EndOfInput()
                return None
            self._take_line(self._lines.popleft())
        return self._events.popleft()

    def start_shutdown(self) -> None:
        """Refuse new requests from now on (`shutdown` does this itself; the transport calls it on
        SIGTERM)."""
        if self.state is State.RUNNING:
            self.state = State.SHUTTING_DOWN

    @property
    def in_flight(self) -> frozenset[Id]:
        return frozenset(self._in_flight)

    # ---- output ------------------------------------------------------------------------------

    def send_result(self, ident: Id, result: Any) -> bytes:
        return self._answer(ident, result_frame(ident, result))

    def send_error(self, ident: Id, code: int, message: str | None = None, data: Any = None) -> bytes:
        return self._answer(ident, error_frame(ident, code, message, data))

    def send_cancelled(self, ident: Id) -> bytes:
        return self._answer(ident, _cancelled(ident))

    def send_notification(self, method: str, params: Any) -> bytes:
        return encode(notification_frame(method, params))

    def start_call(self, method: str, params: Any, waiter: object = None) -> tuple[str, bytes]:
        """A request of ours to the client: its id (answered by a Reply event carrying `waiter`)
        and its bytes."""
        call_id, frame = self._outgoing.start(method, params, waiter)
        return call_id, encode(frame)

    def end_call(self, call_id: str, answered: bool) -> bytes:
        """We stopped waiting for `call_id`. Unless it was answered, the client is told to cancel
        it (as a client cancels ours), so a host handler can stop its work too."""
        self._outgoing.forget(call_id)
        return b"" if answered else encode(notification_frame(CANCEL_METHOD, {"id": call_id}))

    @property
    def calls_waiting(self) -> int:
        return len(self._outgoing)

    def waiters(self) -> list[object]:
        """The waiters of our calls the client has not answered yet."""
        return self._outgoing.waiters()

    def _answer(self, ident: Id, frame: Frame) -> bytes:
        if ident not in self._in_flight:
            raise ProtocolUsageError(f"request {ident!r} is not in flight")
        place = self._in_flight.pop(ident)
        if place is None:
            return encode(frame)
        batch, index = place
        batch.slots[index] = frame
        batch.waiting -= 1
        return self._batch_bytes(batch) if batch.waiting == 0 else b""

    # ---- reading lines -----------------------------------------------------------------------

    def _take_line(self, line: bytes | Oversize) -> None:
        """One line's fault stays that line's: it is answered -32603 (id null) and logged, and the
        lines after it are served."""
        try:
            self._read_line(line)
        except Exception as exc:  # the last guard of the read path: the process never dies on input
            self._events.append(Diagnostic("error", faults.LOG_EVENT, faults.fault_fields(exc, None)))
            self._send(error_frame(None, codes.INTERNAL_ERROR, data=faults.internal_data()))

    def _read_line(self, line: bytes | Oversize) -> None:
        if isinstance(line, Oversize):
            self._refuse_oversize(line)
            return
        if not line.strip():
            return  # blank lines between frames are tolerated, as most line protocols do
        decoded = decode(line)
        self._share = len(line) // max(len(decoded.messages), 1)
        if decoded.batch:
            self._read_batch(decoded.messages)
            return
        frame = self._read_message(decoded.messages[0], None)
        if frame is not None:
            self._send(frame)

    def _refuse_oversize(self, line: Oversize) -> None:
        """Answered -32600 with the request's id when its first bytes show it for certain (so a
        client waiting for that id is not left waiting), else id null. An id still in flight is
        never echoed: that answer would be taken for the running request's."""
        ident = peek_request_id(line.head)
        if ident is not None and ident in self._in_flight:
            ident = None
        limit = self._framer.max_line_bytes
        self._events.append(Diagnostic("warning", "line_too_long", {"bytes": line.size, "limit": limit, "with_id": ident is not None}))
        self._send(error_frame(ident, codes.INVALID_REQUEST, "Message too large", {"kind": TransportKind.TOO_LARGE, "limit": limit}))

    def _read_batch(self, messages: list[Message]) -> None:
        batch = _Batch([None] * len(messages))
        for index, message in enumerate(messages):
            batch.slots[index] = self._read_message(message, (batch, index))
        if batch.waiting == 0:
            self._send_bytes(self._batch_bytes(batch))

    def _read_message(self, message: Message, place: tuple[_Batch, int] | None) -> Frame | None:
        """Acts on one message; returns the frame that answers it at once, if any."""
        if isinstance(message, Invalid):
            return message.frame
        if isinstance(message, Response):
            self._take_response(message)
            return None
        if isinstance(message, Notification):
            self._take_notification(message)
            return None
        return self._take_request(message, place)

    def _take_request(self, request: Request, place: tuple[_Batch, int] | None) -> Frame | None:
        if request.id in self._in_flight:
            return error_frame(None, codes.INVALID_REQUEST, "Request id is already in flight", {"kind": TransportKind.DUPLICATE_ID, "id": request.id})
        refused = refusal(self.methods, request.method, self.state)
        if refused is not None:
            code, data = refused
            return error_frame(request.id, code, data=data)
        if self.state is State.CLOSED:
            # A batch member after `exit` in the same batch: the process is stopping.
            return _cancelled(request.id)
        if request.method == SHUTDOWN_METHOD:
            # Marked now, not when its handler first runs: a second shutdown (or any request) read
            # after it is refused instead of being waited for, which could never end.
            self.state = State.SHUTTING_DOWN
        self._in_flight[request.id] = place
        if place is not None:
            place[0].waiting += 1
        self._events.append(Call(request.id, request.method, request.params, self._share))
        return None

    def _take_notification(self, note: Notification) -> None:
        if self.state is State.CLOSED:
            return
        if note.method == CANCEL_METHOD:
            target = note.params.get("id") if isinstance(note.params, dict) else None
            if isinstance(target, (str, int)) and not isinstance(target, bool) and target in self._in_flight:
                self._events.append(Cancel(target))
            return  # an unknown or finished id: nothing to do
        if note.method == EXIT_METHOD:
            self.exit_code = 0 if self.state is State.SHUTTING_DOWN else 1
            self.state = State.CLOSED
            self._events.append(Exit(self.exit_code))
            return
        method = self.methods.get(note.method)
        if method is None or method.lifecycle or self.state is State.SHUTTING_DOWN:
            self._events.append(Diagnostic("debug", "notification_ignored", {"method": note.method[:MAX_ECHOED_METHOD]}))
            return
        self._events.append(Notify(note.method, note.params, self._share))

    def _take_response(self, response: Response) -> None:
        settled = self._outgoing.settle(response)
        if settled is None:
            self._events.append(Diagnostic("debug", "reply_discarded", {"known": False}))
            return
        call_id, waiter = settled
        self._events.append(Reply(call_id, response.result, response.error, waiter))

    # ---- frames out --------------------------------------------------------------------------

    def _send(self, frame: Frame) -> None:
        self._send_bytes(encode(frame))

    def _send_bytes(self, data: bytes) -> None:
        if data:
            self._events.append(Send(data))

    @staticmethod
    def _batch_bytes(batch: _Batch) -> bytes:
        # Notifications and replies leave no answer; an all-notification batch gets none at all.
        replies = [frame for frame in batch.slots if frame is not None]
        return encode(replies) if replies else b""


def _cancelled(ident: Id) -> Frame:
    return error_frame(ident, codes.REQUEST_CANCELLED, data={"kind": TransportKind.CANCELLED})
