"""Decoding lines into JSON-RPC messages and building reply frames.

Defined behaviour for awkward input (all documented in docs/protocol.md):
- invalid JSON or invalid UTF-8: -32700, id null, `data` {kind "parse_error", reason
  "invalid_json" or "invalid_utf8", offset: the byte in the line where reading stopped, detail};
- nesting deeper than MAX_DEPTH: -32600 (`data.kind` "too_deep"), id null;
- integers beyond 64 bits are read as floats (as orjson and JavaScript read them); such an id is
  refused (-32600);
- escaped lone surrogates are replaced by U+FFFD (visible, never a crash);
- duplicate object keys: the last one wins, as in orjson, Go's encoding/json and JavaScript.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple, TypeGuard

import orjson

from promptd.rpc import codes
from promptd.rpc.codes import TransportKind

# orjson refuses deeper documents; the stdlib fallback is bounded to the same depth so no
# input can exhaust the interpreter's recursion limit.
MAX_DEPTH = 1024
_SURROGATE = re.compile("[\ud800-\udfff]")
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

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
    """One frame as one line. Falls back to the stdlib for values orjson refuses (big ints)."""
    try:
        return orjson.dumps(frame) + b"\n"
    except TypeError:
        return json.dumps(frame, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace") + b"\n"


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
    reply_id = raw_id if _valid_id(raw_id) else None
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


def _valid_id(value: Any) -> TypeGuard[Id]:
    # Strings and integers only: null, fractions, booleans and structures are refused, so every
    # id the server echoes is one a client can correlate exactly.
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return True
    return isinstance(value, int) and INT64_MIN <= value <= INT64_MAX


class _TooDeep(Exception):
    pass


class _NotJson(Exception):
    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data["reason"])
        self.data = data


def _loads(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if "recursion" in str(exc).lower():
            raise _TooDeep from exc
        # orjson refuses escaped lone surrogates, which are valid JSON text.
        try:
            return _loads_fallback(line)
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


def _loads_fallback(line: bytes) -> Any:
    """The stdlib parser, made to read numbers the way orjson does, so an answer never depends on
    which parser a line happened to need."""
    text = line.decode("utf-8")  # invalid UTF-8 raises UnicodeDecodeError, a ValueError
    _check_depth(text)

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def read_float(literal: str) -> float:
        value = float(literal)
        if math.isinf(value):
            raise ValueError("number out of range")  # orjson: "number is infinity"
        return value

    def read_int(literal: str) -> int | float:
        value = int(literal)
        if INT64_MIN <= value <= 2**64 - 1:
            return value
        try:
            return float(value)
        except OverflowError:
            raise ValueError("number out of range") from None  # orjson: "number is infinity"

    value = json.loads(text, parse_constant=refuse_constant, parse_float=read_float, parse_int=read_int)
    return _replace_surrogates(value)


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


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value
