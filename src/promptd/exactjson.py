"""JSON text read and written exactly: integers of any size and lone surrogates survive.

Base layer: imports nothing of promptd's (the standard library and orjson only), so the wire
(rpc/), the log and the render worker's pipe all write JSON the same way.

JSON allows both things orjson refuses: integers beyond 64 bits (orjson reads them as floats and
refuses to write them) and escaped lone surrogates (`"\\ud83d"`, which a JavaScript host writes for
half an emoji; orjson refuses to read and to write them). Here:
- `dumps` is orjson's output, byte for byte, for every value orjson can write; for the others it
  writes the same form, with wide integers in full and each lone surrogate as the lower-case
  `\\udXXX` escape JavaScript's JSON.stringify writes;
- `loads` reads integers exactly and keeps lone surrogates, with orjson's speed when neither occurs.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

# The longest integer literal read: Python's own default bound on int/str conversions (which are
# quadratic in the digits), so a line of huge literals costs bounded time, and every integer read
# can be written back.
MAX_INT_DIGITS = 4300
INT64_MIN = -(2**63)
UINT64_MAX = 2**64 - 1

_SURROGATE = re.compile("[\ud800-\udfff]")
# orjson reads integers from -2**63 to 2**64-1 exactly: a positive one beyond has 20 digits or
# more, a negative one 19 or more. Runs of digits are found by mapping every digit to "0", "-" to
# itself and everything else to " " (one C pass, several times faster than a regular expression)
# and searching for those two shapes, so common 19-digit numbers (nanosecond times) cost nothing.
_DIGITS_MARKED = bytes(0x30 if 0x30 <= byte <= 0x39 else byte if byte == 0x2D else 0x20 for byte in range(256))
_LONG_RUNS = (b"0" * 20, b"-" + b"0" * 19)
_JSON_BLANKS = b" \t\r\n"


def dumps(value: Any) -> bytes:
    """`value` as compact JSON, as orjson writes it; wide integers and lone surrogates written exactly.
    Raises TypeError for what orjson cannot write otherwise (an unknown type, a key that is not a
    string)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return _dumps_exact(value)


def dumps_indented(value: Any) -> bytes:
    """`value` as JSON for a person (the command line's output), indented by two spaces. Where
    orjson refuses a value, the stdlib writes it, escaping every non-ASCII character."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError:
        return json.dumps(value, indent=2).encode("ascii")


def loads(data: bytes | bytearray | str) -> Any:
    """`data` read with integers exact and lone surrogates kept. Raises ValueError on invalid JSON."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if not has_long_integer(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass  # a lone surrogate, or not JSON: the exact reader tells which
    return loads_exact(raw.decode("utf-8"))


def has_long_integer(data: bytes | bytearray) -> bool:
    """Whether `data` may hold an integer orjson would read as a float (beyond -2**63 .. 2**64-1).
    A run of digits counts when it stands where a number can (after `[`, `:`, `,` or at the start)
    and no fraction or exponent follows; one inside a string that looks so only costs the exact reader."""
    marked = data.translate(_DIGITS_MARKED)
    for run in _LONG_RUNS:
        found = marked.find(run)
        while found != -1:
            start = found + 1 if run[0] == 0x2D else found
            end = found + len(run)
            while end < len(marked) and marked[end] == 0x30:
                end += 1
            if _is_integer_token(data, start, end):
                literal = data[start - 1 : end] if start and data[start - 1] == 0x2D else data[start:end]
                if len(literal) > 20 or not INT64_MIN <= int(literal) <= UINT64_MAX:
                    return True
            found = marked.find(run, end)
    return False


def _is_integer_token(data: bytes | bytearray, start: int, end: int) -> bool:
    if end < len(data) and data[end] in b".eE":
        return False
    before = start - 1
    if before >= 0 and data[before] == 0x2D:  # "-"
        before -= 1
    while before >= 0 and data[before] in _JSON_BLANKS:
        before -= 1
    return before < 0 or data[before] in b"[:,"


def loads_exact(text: str) -> Any:
    """The stdlib parser, reading numbers as orjson does except that integers stay exact: no NaN or
    Infinity, a float beyond a double's range refused, and lone surrogates kept as they are."""

    def refuse_constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    def read_float(literal: str) -> float:
        value = float(literal)
        if math.isinf(value):
            raise ValueError("number out of range")  # orjson: "number is infinity"
        return value

    def read_int(literal: str) -> int:
        if len(literal.lstrip("-")) > MAX_INT_DIGITS:
            raise ValueError("number out of range")
        return int(literal)

    return json.loads(text, parse_constant=refuse_constant, parse_float=read_float, parse_int=read_int)


class _Literal(bytes):
    """Text already written, on the writer's stack beside values still to write."""


_OPEN_OBJECT = _Literal(b"{")
_CLOSE_OBJECT = _Literal(b"}")
_OPEN_ARRAY = _Literal(b"[")
_CLOSE_ARRAY = _Literal(b"]")
_COMMA = _Literal(b",")


# How many levels below a frame orjson is tried again on each member: the members that hold no
# wide integer or lone surrogate (nearly all of a long history) are then written at orjson's
# speed. Each level tried costs at most one more orjson pass over the frame, so the bound keeps a
# deeply nested frame linear.
_RETRY_LEVELS = 16


def _dumps_exact(value: Any) -> bytes:
    # A loop with its own stack, not recursion: a frame may nest as deep as any input does.
    out: list[bytes] = []
    stack: list[Any] = [value]
    levels: list[int] = [0]  # the nesting level of each entry of `stack`
    while stack:
        item = stack.pop()
        level = levels.pop() + 1
        if type(item) is _Literal:
            out.append(item)
        elif isinstance(item, dict):
            stack.append(_CLOSE_OBJECT)
            entries = list(item.items())
            for index in range(len(entries) - 1, -1, -1):
                key, member = entries[index]
                if not isinstance(key, str):
                    raise TypeError("Dict key must be str")
                stack.append(_member(member, level))
                stack.append(_Literal(_string(key) + b":"))
                if index:
                    stack.append(_COMMA)
            levels.extend([level] * (len(stack) - len(levels)))
            out.append(_OPEN_OBJECT)
        elif isinstance(item, (list, tuple)):
            stack.append(_CLOSE_ARRAY)
            for index in range(len(item) - 1, -1, -1):
                stack.append(_member(item[index], level))
                if index:
                    stack.append(_COMMA)
            levels.extend([level] * (len(stack) - len(levels)))
            out.append(_OPEN_ARRAY)
        elif isinstance(item, str):
            out.append(_string(item))
        elif type(item) is int:
            out.append(str(item).encode("ascii"))
        else:
            out.append(orjson.dumps(item))  # floats, booleans, null and orjson's other types
    return b"".join(out)


def _member(value: Any, level: int) -> Any:
    """A container member as orjson writes it when it can (near the top), else the member itself."""
    if level <= _RETRY_LEVELS and isinstance(value, (dict, list, tuple)):
        try:
            return _Literal(orjson.dumps(value))
        except TypeError:
            pass
    return value


def _string(text: str) -> bytes:
    try:
        return orjson.dumps(text)
    except TypeError:
        pass
    # orjson escapes every piece between the surrogates; each surrogate is written as JavaScript does.
    parts: list[bytes] = [b'"']
    start = 0
    for match in _SURROGATE.finditer(text):
        parts.append(orjson.dumps(text[start : match.start()])[1:-1])
        parts.append(b"\\u%04x" % ord(match.group()))
        start = match.end()
    parts.append(orjson.dumps(text[start:])[1:-1])
    parts.append(b'"')
    return b"".join(parts)
