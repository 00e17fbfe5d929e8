"""Bounded line framing: bytes in, complete lines (or over-limit notices) out.

A line longer than the limit is never held in memory: once the buffer passes the limit without a
newline, the framer drops what it has and keeps dropping until the next newline, then reports one
`Oversize` so the caller can answer it and serve the following line. Only the line's first
HEAD_BYTES are kept, so that `peek_request_id` can find the id to answer it with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from promptd import exactjson
from promptd.rpc.messages import Id, valid_id

# How much of a discarded line is kept to look for its id. A request's envelope
# (`{"jsonrpc":"2.0","id":…,"method":…,` then `"params":`) is well under 200 bytes with any id and
# method name a client really uses (a UUID id is 38 bytes with its quotes), so 4 KiB finds it with
# a wide margin, and is still a fixed, negligible cost per line however large the limit.
HEAD_BYTES = 4096


@dataclass(frozen=True, slots=True)
class Oversize:
    """A line over the limit was discarded; `size` is how many bytes it had, `head` its first
    HEAD_BYTES (at most)."""

    size: int
    head: bytes = field(default=b"", compare=False, repr=False)


class LineFramer:
    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False
        self._discarded = 0
        self._head = bytearray()

    def feed(self, data: bytes) -> list[bytes | Oversize]:
        out: list[bytes | Oversize] = []
        start = 0
        end = len(data)
        while start < end:
            newline = data.find(b"\n", start)
            if newline == -1:
                self._take(data[start:])
                break
            self._take(data[start:newline])
            out.append(self._finish_line())
            start = newline + 1
        return out

    def close(self) -> list[bytes | Oversize]:
        """End of input: a final unterminated line still counts as a line."""
        if self._discarding:
            return [self._finish_line()]
        if self._buffer.strip():
            return [self._finish_line()]
        self._buffer.clear()
        return []

    def _take(self, chunk: bytes) -> None:
        if self._discarding:
            self._discarded += len(chunk)
            self._keep_head(chunk)
            return
        if len(self._buffer) + len(chunk) > self.max_line_bytes:
            self._discarding = True
            self._discarded = len(self._buffer) + len(chunk)
            self._head = self._buffer[:HEAD_BYTES]
            self._buffer = bytearray()
            self._keep_head(chunk)
            return
        self._buffer += chunk

    def _keep_head(self, chunk: bytes) -> None:
        room = HEAD_BYTES - len(self._head)
        if room > 0:
            self._head += chunk[:room]

    def _finish_line(self) -> bytes | Oversize:
        if self._discarding:
            self._discarding = False
            size, self._discarded = self._discarded, 0
            head, self._head = bytes(self._head), bytearray()
            return Oversize(size, head)
        line = bytes(self._buffer)
        self._buffer.clear()
        if line.endswith(b"\r"):
            line = line[:-1]
        return line


class _Unsure(Exception):
    pass


_WHITESPACE = b" \t\r\n"
_DIGITS = b"0123456789"
# Keys that make the line a reply to a request of ours, not a request: never answered with its id.
_REPLY_KEYS = frozenset({"result", "error"})


def peek_request_id(head: bytes) -> Id | None:
    """The id of the request a discarded line starts with, read from its first bytes, or None when
    that is not certain.

    One forward pass over `head` (no regular expression, no backtracking), reading the top-level
    object's members in order while they are scalars. The id is returned only when:
    - the line starts with an object (not a batch) whose `"id"` member comes before any nested
      value, is complete inside `head`, and is a valid id (a string or an integer);
    - no second `"id"` member and no `"result"` / `"error"` member (a reply) was seen;
    - the line is recognisably a request: a `"method"` member was seen, or the reading stopped at
      `"params"`.
    Anything malformed, truncated or surprising before that point gives None (answered id null).
    A duplicate `"id"` after the first nested value cannot be seen and is not looked for.
    """
    try:
        return _peek(head)
    except _Unsure:
        return None


def _peek(head: bytes) -> Id | None:
    end = len(head)
    i = _skip_ws(head, 0)
    if i >= end or head[i] != ord("{"):
        return None
    i += 1
    found = False
    ident: Id | None = None
    method = False
    stopped_at: str | None = None
    first = True
    while True:
        i = _skip_ws(head, i)
        if i >= end:
            break
        if head[i] == ord("}"):
            raise _Unsure  # the object ends inside the head, yet the line goes on: not one object
        if not first:
            if head[i] != ord(","):
                raise _Unsure
            i = _skip_ws(head, i + 1)
            if i >= end:
                break
        first = False
        key_end = _string_end(head, i)
        if key_end is None:
            break  # the key runs past the head
        key = _decode(head[i:key_end])
        if not isinstance(key, str):
            raise _Unsure
        if key in _REPLY_KEYS:
            return None
        i = _skip_ws(head, key_end)
        if i >= end:
            stopped_at = key
            break
        if head[i] != ord(":"):
            raise _Unsure
        i = _skip_ws(head, i + 1)
        if i >= end or head[i] in b"{[":
            stopped_at = key
            break
        value_end = _scalar_end(head, i)
        if value_end is None:
            if key == "id":
                return None  # the id itself runs past the head
            stopped_at = key
            break
        if key == "id":
            if found:
                return None  # duplicate ids: the last one wins in the real parse
            found = True
            ident = _as_id(_decode(head[i:value_end]))
        elif key == "method":
            method = True
        i = value_end
    if not found or ident is None:
        return None
    if method or stopped_at == "params":
        return ident
    return None


def _skip_ws(data: bytes, i: int) -> int:
    end = len(data)
    while i < end and data[i] in _WHITESPACE:
        i += 1
    return i


def _string_end(data: bytes, i: int) -> int | None:
    """The index just past the JSON string starting at `i`, or None when it runs past the data."""
    if data[i] != ord('"'):
        raise _Unsure
    i += 1
    end = len(data)
    while i < end:
        c = data[i]
        if c == ord("\\"):
            i += 2
            continue
        if c == ord('"'):
            return i + 1
        if c < 0x20:
            raise _Unsure  # a raw control character: not JSON
        i += 1
    return None


def _scalar_end(data: bytes, i: int) -> int | None:
    """The index just past the scalar starting at `i`, or None when it may run past the data. A
    number or literal counts as complete only when a delimiter follows it inside the data."""
    c = data[i]
    if c == ord('"'):
        return _string_end(data, i)
    end = len(data)
    j = i
    if c == ord("-") or c in _DIGITS:
        j += 1
        while j < end and data[j] in b"0123456789.eE+-":
            j += 1
    else:
        literal = next((lit for lit in (b"true", b"false", b"null") if lit[0] == c), None)
        if literal is None:
            raise _Unsure
        if not data.startswith(literal, i):
            if literal.startswith(data[i:]):
                return None  # cut by the end of the data
            raise _Unsure
        j = i + len(literal)
    if j >= end:
        return None
    if data[j] not in _WHITESPACE and data[j] not in b",}":
        raise _Unsure
    return j


def _decode(token: bytes) -> object:
    try:
        # Validates escapes, UTF-8 and number syntax strictly; reads a wide integer exactly.
        return exactjson.loads(token)
    except (ValueError, RecursionError) as exc:
        raise _Unsure from exc


def _as_id(value: object) -> Id | None:
    # The same rule as promptd.rpc.messages.
    return value if valid_id(value) else None
