"""Structured values sanitized string by string, key by key, saying where each change was made.

Domain layer: must not import promptd.rpc or promptd.methods.

`sanitize_value` (content/sanitize_value) sanitizes every string and every object key of a JSON
value. The items of a list that carry text (strings, and the parts promptd.reminders.shapes
.TEXT_FIELDS names: text, input_text, output_text, summary_text, reasoning_text, refusal,
thinking, an MCP resource's text, parts without a type) are one stream: a tag split across them,
whatever their types and whatever lies between them, is found on the joined text and neutralized
where it begins. Every finding is reported with an RFC 6901 JSON pointer to the string (or the
object member whose key) it is in.

A value here has no author a provider vouches for, so nothing is left in place: parts that look
signed are sanitized like the rest (history/sanitize, which knows where a model's signed content
can be, is the method that leaves it alone). `Walk` is also history/sanitize's walker, with a
`locked` mode for signed content: read and reported, never edited.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, cast

from promptd.reminders.kinds import ChangeKind
from promptd.reminders.sanitize import Finding, sanitize_stream
from promptd.reminders.shapes import Path, at_path, text_path

# Structured values nested deeper than this are replaced by DEPTH_MARKER. Real tool results stay
# well under it; the limit keeps recursion far from the interpreter's own.
MAX_VALUE_DEPTH = 64
DEPTH_MARKER = f"[promptd: value nested deeper than {MAX_VALUE_DEPTH} levels withheld]"
# The characters of JSON pointers one walk writes out. Past it, a change's path is cut to its first
# token (the message, in a history): a value built so that every change sits under long keys
# would otherwise make the list of changes grow with the square of the input.
PATH_BUDGET = 4 * 1024 * 1024


class Pointer:
    """A place in a value, as a chain of tokens; written out as an RFC 6901 JSON pointer only
    when a change is reported there."""

    __slots__ = ("parent", "token", "_text")

    def __init__(self, parent: Pointer | None, token: str | int) -> None:
        self.parent = parent
        self.token = token
        self._text: str | None = "" if parent is None else None

    def child(self, token: str | int) -> Pointer:
        return Pointer(self, token)

    def first(self) -> Pointer:
        """The ancestor one token below the root (itself when it is one)."""
        at = self
        while at.parent is not None and at.parent.parent is not None:
            at = at.parent
        return at

    def text(self) -> str:
        if self._text is None:
            token = str(self.token).replace("~", "~0").replace("/", "~1")
            # Only the root has no parent, and its text is set.
            self._text = cast(Pointer, self.parent).text() + "/" + token
        return self._text


ROOT = Pointer(None, "")


class Change(NamedTuple):
    path: str
    kind: ChangeKind
    edited: bool


class Walk:
    """One sanitizing walk: values cleaned (or, locked, only read), and what was found where."""

    def __init__(self, nonce: str | None) -> None:
        self.nonce = nonce
        self.found: list[tuple[Pointer, ChangeKind, bool]] = []

    # -- what was found ------------------------------------------------------------------------------
    def record(self, at: Pointer, kind: ChangeKind, edited: bool) -> None:
        self.found.append((at, kind, edited))

    def record_stream(self, findings: list[Finding], places: list[Pointer]) -> None:
        for finding in findings:
            self.found.append((places[finding.part], ChangeKind(finding.kind), finding.edited))

    @property
    def neutralized(self) -> int:
        return sum(1 for _, kind, edited in self.found if edited and kind is not ChangeKind.STALE_BLOCK)

    def changes(self) -> list[Change]:
        out = []
        spent = 0
        for at, kind, edited in self.found:
            if spent > PATH_BUDGET:
                at = at.first()
            path = at.text()
            spent += len(path)
            out.append(Change(path, kind, edited))
        return out

    # -- values --------------------------------------------------------------------------------------
    def text(self, text: str, at: Pointer, locked: bool = False) -> str:
        stream = sanitize_stream([text], self.nonce, [locked])
        self.record_stream(stream.findings, [at])
        return stream.texts[0]

    def value(self, value: object, at: Pointer, depth: int, locked: bool = False) -> object:
        if isinstance(value, str):
            return self.text(value, at, locked)
        if not isinstance(value, (dict, list, tuple)):
            return value
        if depth >= MAX_VALUE_DEPTH:
            self.record(at, ChangeKind.TOO_DEEP, not locked)
            if not locked:
                return DEPTH_MARKER
            # Signed content is kept whole however deep it goes, so what it holds is still
            # reported (at the place where the walk stopped): a kept value never hides a tag.
            stream = sanitize_stream(_strings(value), self.nonce, None)
            self.record_stream([finding._replace(part=0, edited=False) for finding in stream.findings], [at])
            return value
        if isinstance(value, dict):
            return self.object(value, at, depth, locked)
        return self.list(list(value), at, depth, locked)

    def list(self, items: list[object], at: Pointer, depth: int, locked: bool = False) -> list[object]:
        """A list at `depth`: its text-bearing items as one stream, everything else as values."""
        paths = [text_path(item) for item in items]
        carrying = [i for i, path in enumerate(paths) if path is not None]
        texts = [_text_at(items[i], paths[i]) for i in carrying]
        places = [_place(at.child(i), paths[i]) for i in carrying]
        stream = sanitize_stream(texts, self.nonce, [locked] * len(texts))
        self.record_stream(stream.findings, places)
        cleaned = dict(zip(carrying, stream.texts, strict=True))
        out: list[object] = []
        for i, item in enumerate(items):
            path = paths[i]
            if path is None:
                out.append(self.value(item, at.child(i), depth + 1, locked))
            elif not path:
                out.append(cleaned[i])
            else:
                # The part object is one level deeper than the list, its fields one more.
                # text_path gives a non-empty path for objects only.
                out.append(self.part(cast(dict[str, object], item), at.child(i), depth + 1, path, cleaned[i], locked))
        return out

    def part(self, item: dict[str, object], at: Pointer, depth: int, path: Path, text: str, locked: bool = False) -> dict[str, object]:
        """A part at `depth` whose text at `path` is already sanitized: `text` put there, every
        other field and every key sanitized."""
        head = path[0]
        if len(path) == 1:
            inner: object = text
        else:
            # The path was read through it: an object.
            inner = self.part(cast(dict[str, object], item[head]), at.child(head), depth + 1, path[1:], text, locked)
        return self.object(item, at, depth, locked, {head: inner})

    def object(self, value: Mapping[str, object], at: Pointer, depth: int, locked: bool = False, given: Mapping[str, object] | None = None) -> dict[str, object]:
        """`value` with keys sanitized and fields cleaned; the fields in `given` take the value
        given, already cleaned. A key sanitizing leaves as it was keeps its name; a key it
        changes never takes a name another key already has (it gets a visible suffix instead),
        so a key that only looks like another cannot take that key's place. Locked, the keys
        are read and reported and kept as they are."""
        names: list[tuple[str, bool]] = []
        for key in value:
            name = self.text(str(key), at.child(key), locked)
            names.append((name, name == key))
        if locked:
            return {key: given[key] if given and key in given else self.value(item, at.child(key), depth + 1, True) for key, item in value.items()}
        taken: dict[str, object] = {name: None for name, unchanged in names if unchanged}
        # Per base name, the next duplicate number to try: renaming stays linear however many collide.
        next_number: dict[str, int] = {}
        out: dict[str, object] = {}
        for (key, item), (name, unchanged) in zip(value.items(), names, strict=True):
            if not unchanged:
                name = _unique(name, taken, next_number)
                taken[name] = None
            out[name] = given[key] if given is not None and key in given else self.value(item, at.child(key), depth + 1)
        return out


def _strings(value: object) -> list[str]:
    """Every key and string in `value`, in document order, read without recursion (the value is
    deeper than the walk goes). Read as one stream, so a tag split between neighbours is found."""
    out: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            for key, inner in reversed(list(item.items())):
                stack.append(inner)
                stack.append(str(key))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
    return out


def _text_at(item: object, path: Path | None) -> str:
    # text_path checked that a string is there.
    return cast(str, item if not path else at_path(item, path))


def _place(at: Pointer, path: Path | None) -> Pointer:
    for key in path or ():
        at = at.child(key)
    return at


def _unique(name: str, taken: dict[str, object], next_number: dict[str, int]) -> str:
    if name not in taken:
        return name
    n = next_number.get(name, 2)
    while f"{name} [duplicate key {n}]" in taken:
        n += 1
    next_number[name] = n + 1
    return f"{name} [duplicate key {n}]"


class Cleaned(NamedTuple):
    value: object
    changes: list[Change]
    neutralized: int


def sanitize_value(value: object, nonce: str | None = None) -> tuple[object, int]:
    """Sanitizes every string and every object key in a JSON-shaped value: (value, count).

    Keys that become equal after sanitizing are both kept: later ones get a visible
    " [duplicate key N]" suffix rather than silently overwriting an earlier one. A value nested
    deeper than MAX_VALUE_DEPTH is replaced by DEPTH_MARKER (fail closed: its content is not
    passed on)."""
    cleaned = clean_value(value, nonce)
    return cleaned.value, cleaned.neutralized


def clean_value(value: object, nonce: str | None = None) -> Cleaned:
    """`sanitize_value` with the changes, each at a JSON pointer into `value`."""
    walk = Walk(nonce)
    out = walk.value(value, ROOT, 0)
    return Cleaned(out, walk.changes(), walk.neutralized)
