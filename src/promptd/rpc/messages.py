"""Decoding lines into JSON-RPC messages and building reply frames.

Defined behaviour for awkward input (all documented in docs/protocol.md):
- invalid JSON or invalid UTF-8: -32700, id null, `data` {kind "parse_error", reason
  "invalid_json" or "invalid_utf8", offset: the byte in the line where reading stopped, detail};
- nesting deeper than MAX_DEPTH: -32600 (`data.kind` "too_deep"), id null;
- integers are read exactly, however wide (up to exactjson.MAX_INT_DIGITS digits; a longer
  literal is a parse error), and written back in full; an integer id of any size is echoed exactly;
- escaped lone surrogates (`"\ud83d"`, half of a character a UTF-16 host cut) are kept, in values
  and keys alike, and written back as the same escapes;
- duplicate object keys: the last one wins, as in orjson, Go's encoding/json and JavaScript.

orjson reads and writes every line and frame that holds neither; promptd.exactjson takes over for
those that do, with the same output form.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeGuard

import orjson

from promptd import exactjson
from promptd.rpc import codes
from promptd.rpc.codes import TransportKind

# orjson refuses deeper documents; the stdlib fallback is bounded to the same depth so no
# input can exhaust the interpreter's recursion limit.
MAX_DEPTH = 1024

Id = str | int


class Request(NamedTuple):
    id: Id
    method: str
    params: Any


class Notification(NamedTuple):
    method: str
    params: Any


class Response(NamedTuple):
    """A reply from the client to a request the server sent it."""

    id: Id
    result: Any = None
    error: Any = None


class Invalid(NamedTuple):
    """A message that is answered with an error frame and nothing else."""

    frame: dict[str, Any]


Message = Request | Notification | Response | Invalid


class Decoded(NamedTuple):
    messages: list[Message]
    batch: bool


def error_frame(id_: Id | None, code: int, message: str | None = None, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message or codes.MESSAGES.get(code, "Server error")}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": error}


def result_frame(id_: Id, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def request_frame(id_: Id, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}


def notification_frame(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def encode(frame: Any) -> bytes:
    """One frame as one line: orjson's form, wide integers and lone surrogates written exactly."""
    return exactjson.dumps(frame) + b"\n"


def decode(line: bytes) -> Decoded:
    try:
        value = _loads(line)
    except _TooDeep:
        return Decoded([Invalid(error_frame(None, codes.INVALID_REQUEST, data={"kind": TransportKind.TOO_DEEP, "max_depth": MAX_DEPTH}))], False)
    except _NotJson as bad:
        return Decoded([Invalid(error_frame(None, codes.PARSE_ERROR, data=bad.data))], False)
    if isinstance(value, list):
        if not value:
            return Decoded([Invalid(error_frame(None, codes.INVALID_REQUEST, data={"kind": TransportKind.EMPTY_BATCH}))], False)
        return Decoded([classify(item) for item in value], True)
    return Decoded([classify(value)], False)


def classify(obj: Any) -> Message:
    """Turns one decoded JSON value into a message, or an error frame for it."""
    if not isinstance(obj, dict):
        return Invalid(error_frame(None, codes.INVALID_REQUEST, data={"kind": TransportKind.NOT_AN_OBJECT}))
    has_id = "id" in obj
    raw_id = obj.get("id")
    reply_id = raw_id if valid_id(raw_id) else None
    if obj.get("jsonrpc") != "2.0":
        return Invalid(error_frame(reply_id, codes.INVALID_REQUEST, data={"kind": TransportKind.BAD_VERSION}))
    method = obj.get("method")
    if method is None and has_id and ("result" in obj or "error" in obj):
        if reply_id is None:
            return Invalid(error_frame(None, codes.INVALID_REQUEST, data={"kind": TransportKind.INVALID_ID}))
        return Response(reply_id, obj.get("result"), obj.get("error"))
    if not isinstance(method, str):
        return Invalid(error_frame(reply_id, codes.INVALID_REQUEST, data={"kind": TransportKind.INVALID_METHOD}))
    if has_id and reply_id is None:
        return Invalid(error_frame(None, codes.INVALID_REQUEST, data={"kind": TransportKind.INVALID_ID}))
    params = obj.get("params")
    if "params" in obj and not isinstance(params, (dict, list)):
        return Invalid(error_frame(reply_id, codes.INVALID_REQUEST, data={"kind": TransportKind.INVALID_PARAMS_TYPE}))
    if reply_id is None:
        return Notification(method, params)
    return Request(reply_id, method, params)


def valid_id(value: Any) -> TypeGuard[Id]:
    """Strings and integers (of any size, read exactly) only: null, fractions, booleans and
    structures are refused, so every id the server echoes is one a client can correlate exactly."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class _TooDeep(Exception):
    pass


class _NotJson(Exception):
    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data["reason"])
        self.data = data


def _loads(line: bytes) -> Any:
    if exactjson.has_long_integer(line):
        # orjson would read such an integer as a float. Invalid JSON falls through to orjson,
        # which says where reading stopped.
        try:
            return _loads_exact(line)
        except RecursionError as deep:
            raise _TooDeep from deep
        except ValueError:
            pass
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc).lower():
            raise _TooDeep from exc
        # orjson refuses escaped lone surrogates, which are valid JSON text.
        try:
            return _loads_exact(line)
        except RecursionError as deep:
            # The stdlib parser recurses: near MAX_DEPTH it can run out of stack first.
            raise _TooDeep from deep
        except ValueError:
            raise _NotJson(_where(line, exc)) from None


def _where(line: bytes, exc: orjson.JSONDecodeError) -> dict[str, Any]:
    """What a parse error says: why and where, as a byte offset into the line (orjson counts
    characters), with orjson's own description, which names a token class and never echoes input."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as bad:
        return {"kind": TransportKind.PARSE_ERROR, "reason": "invalid_utf8", "offset": bad.start, "detail": "invalid UTF-8"}
    offset = len(text[: exc.pos].encode("utf-8", "surrogatepass"))
    return {"kind": TransportKind.PARSE_ERROR, "reason": "invalid_json", "offset": offset, "detail": exc.msg}


def _loads_exact(line: bytes) -> Any:
    """The exact reader (wide integers, lone surrogates), bounded to orjson's depth so that no
    input can exhaust the interpreter's recursion limit."""
    text = line.decode("utf-8")  # invalid UTF-8 raises UnicodeDecodeError, a ValueError
    _check_depth(text)
    return exactjson.loads_exact(text)


def _check_depth(text: str) -> None:
    depth = 0
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _TooDeep
        elif ch in "]}":
            depth -= 1
