"""What a session's previous system prompt was, and where the next one departs from it.

Domain layer: plain functions over plain data. A host that renders the system prompt on every
turn wants to know when its cached prefix stops matching (a provider's prompt cache then
starts over for the whole conversation) and why. Only hashes are kept, never prompt text: the
stable prefix line by line, and each variable the template saw.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

# Eight bytes of SHA-256 per line or variable: enough to tell versions apart, small per session.
DIGEST_BYTES = 8
# A prompt longer than this many lines is compared on its first lines only (the memory a
# session keeps stays bounded whatever the template renders).
MAX_LINES = 4096


class PromptRecord(NamedTuple):
    lines: tuple[bytes, ...]  # the stable prefix, one digest per line
    variables: Mapping[str, bytes]  # one digest per template variable


class PrefixChange(NamedTuple):
    changed: bool
    # 1-based line of the stable prefix where it first differs from the previous render's.
    first_line: int | None
    # The template variables whose values changed since the previous render, sorted.
    variables: list[str]


def _digest(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()[:DIGEST_BYTES]


def _canonical(value: Any) -> bytes:
    """One spelling per value, for its digest. orjson refuses wide integers and lone surrogates
    (possible in a host's context); the stdlib spells those, escaping every non-ASCII character."""
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(value, default=str, sort_keys=True, separators=(",", ":")).encode("ascii")


def record(text: str, stable_prefix_chars: int, variables: Mapping[str, Any]) -> PromptRecord:
    lines = text[:stable_prefix_chars].split("\n")[:MAX_LINES]
    return PromptRecord(
        tuple(_digest(line.encode("utf-8", "surrogatepass")) for line in lines),
        {name: _digest(_canonical(value)) for name, value in variables.items()},
    )


def compare(previous: PromptRecord | None, current: PromptRecord) -> PrefixChange | None:
    """None for a session's first render; else whether the stable prefix changed, where, and
    which variables differ."""
    if previous is None:
        return None
    changed_names = sorted(name for name in previous.variables.keys() | current.variables.keys() if previous.variables.get(name) != current.variables.get(name))
    first = next((n for n, (a, b) in enumerate(zip(previous.lines, current.lines), start=1) if a != b), None)
    if first is None and len(previous.lines) != len(current.lines):
        first = min(len(previous.lines), len(current.lines)) + 1
    return PrefixChange(first is not None, first, changed_names)
