"""Citation marker parsing: one left-to-right scan, all three forms, streaming-safe.

Domain layer: imports nothing from promptd.rpc or promptd.methods.

A marker is a TYPE keyword and a payload of ids, written in one of three forms (docs/citations.md
has the grammar):

    pua     U+E200 TYPE U+E202 IDS U+E201
    ascii   [[TYPE:IDS]]
    object  U+FFFC TYPE U+FFFC IDS U+FFFC      (the PUA form after a renderer replaced every
                                               private-use character with U+FFFC)

The scan finds the next possible opener with a compiled regex and runs a small hand-written
matcher from it. Every matcher reads at most MAX_MARKER_CHARS characters and decides MATCH, FAIL
or "needs more input", looking only at characters it has read. That is what makes streaming
exact: a decision taken on a prefix of the text is the same decision taken on the whole text, so
parsing chunk by chunk (carrying `pending` over) shows the same as parsing everything at once.

Linear time: a failed attempt never reads past the next opener of its own form (openers are not
id characters), except the object form, which may read past two U+FFFC before failing; a matched
marker is consumed. So every character is read a bounded number of times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import NamedTuple

from promptd.citations.kinds import MarkerForm, SegmentType
from promptd.text import is_high_surrogate, join_surrogate_pairs

PUA_OPEN = "\ue200"
PUA_CLOSE = "\ue201"
PUA_SEPARATOR = "\ue202"
OBJECT_DELIMITER = "\ufffc"
# The only type that becomes a citation; any other type is reported as a `marker` segment.
CITE = "cite"

# Longest marker the parser accepts, opener to closer. Real markers carry a handful of short ids
# (`t0_src_1` is 8 characters), so 512 leaves room for dozens of ids. The cap also bounds how much
# text a streaming host holds back as `pending` before it is shown.
MAX_MARKER_CHARS = 512
# Type keywords are short words (`cite`, `image`, `filecite`); longer runs are prose, not a type.
MAX_TYPE_CHARS = 32

# Where a marker may begin: an opener followed by the start of a type keyword, or cut off by the
# end of the text (a lone `[` may be the first half of `[[`). Anything else cannot become a marker,
# so the C regex engine skips it without running a matcher (prose is full of `[`).
_OPENER = re.compile("\\[\\[[ \\t]*[A-Za-z]|\ue200[ \\t]*[A-Za-z]|\ufffc[A-Za-z]|\\[(?:\\[[ \\t]*)?\\Z|\ue200[ \\t]*\\Z|\ufffc\\Z")
_TYPE = re.compile(f"[A-Za-z][A-Za-z0-9_-]{{0,{MAX_TYPE_CHARS - 1}}}")
# An id is a run of anything but whitespace, controls, separators, brackets, the citation and
# reminder private-use characters (U+E200-U+E204) and U+FFFC. Excluding the openers is what keeps
# a failed attempt from running over the next marker.
_ID = re.compile("[^\\s\\x00-\\x1f\\x7f,;\\[\\]\ue200-\ue204\ufffc]+")
_BLANKS = " \t"
_SEPARATORS = ",;"


class Segment(NamedTuple):
    type: SegmentType
    # The exact source text of the span: segments concatenate back to the input.
    text: str
    start: int
    end: int
    ids: tuple[str, ...] = ()
    form: MarkerForm | None = None
    # The marker's TYPE keyword, lower-cased; None for text.
    marker_type: str | None = None


@dataclass(frozen=True, slots=True)
class Parsed:
    segments: list[Segment] = field(default_factory=list)
    # The unfinished marker at the end of the text, held back from `segments`; None when there is
    # none (always None for a final parse).
    pending: str | None = None


class _NeedMore(Exception):
    """The matcher ran off the end of the text before it could decide."""


class _Cursor:
    """Reads one marker attempt: never past the text's end (raises _NeedMore) nor past the cap
    (reads None there, which no rule accepts, so the attempt fails)."""

    __slots__ = ("text", "pos", "end", "cap")

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos
        self.end = len(text)
        self.cap = pos + MAX_MARKER_CHARS

    def peek(self) -> str | None:
        if self.pos >= self.cap:
            return None
        if self.pos >= self.end:
            raise _NeedMore
        return self.text[self.pos]

    def accept(self, char: str) -> bool:
        if self.peek() == char:
            self.pos += 1
            return True
        return False

    def skip_blanks(self) -> None:
        char = self.peek()
        while char is not None and char in _BLANKS:
            self.pos += 1
            char = self.peek()

    def run(self, pattern: re.Pattern[str]) -> str | None:
        """The longest run of `pattern` here; None when there is none. A run that reaches the end
        of the text might go on in the next chunk, so it needs more input."""
        if self.peek() is None:
            return None
        limit = min(self.end, self.cap)
        match = pattern.match(self.text, self.pos, limit)
        if match is None:
            return None
        if match.end() == self.end < self.cap:
            raise _NeedMore
        self.pos = match.end()
        return match.group()


class _Match(NamedTuple):
    end: int
    marker_type: str
    ids: tuple[str, ...]
    form: MarkerForm


def _read_type(cursor: _Cursor) -> str | None:
    word = cursor.run(_TYPE)
    return word.lower() if word is not None else None


def _read_ids(cursor: _Cursor, closer: str, extra_separator: str = "") -> list[str] | None:
    """IDS of the pua and ascii forms: ids separated by commas, semicolons, blanks (and U+E202 in
    the pua form), stopping before `closer`; None when anything else comes first or there is no id."""
    ids: list[str] = []
    while True:
        char = cursor.peek()
        if char is None:
            return None
        if char == closer:
            return ids or None
        if char in _SEPARATORS or char in _BLANKS or (extra_separator and char == extra_separator):
            cursor.pos += 1
            continue
        ident = cursor.run(_ID)
        if ident is None:
            return None
        ids.append(ident)


def _match_ascii(text: str, start: int, final: bool) -> _Match | None:
    cursor = _Cursor(text, start)
    if not (cursor.accept("[") and cursor.accept("[")):
        return None
    cursor.skip_blanks()
    marker_type = _read_type(cursor)
    if marker_type is None:
        return None
    cursor.skip_blanks()
    if not cursor.accept(":"):
        return None
    ids = _read_ids(cursor, "]")
    if ids is None or not (cursor.accept("]") and cursor.accept("]")):
        return None
    return _Match(cursor.pos, marker_type, tuple(ids), MarkerForm.ASCII)


def _match_pua(text: str, start: int, final: bool) -> _Match | None:
    cursor = _Cursor(text, start)
    cursor.accept(PUA_OPEN)
    cursor.skip_blanks()
    marker_type = _read_type(cursor)
    if marker_type is None:
        return None
    cursor.skip_blanks()
    if not cursor.accept(PUA_SEPARATOR):
        return None
    ids = _read_ids(cursor, PUA_CLOSE, PUA_SEPARATOR)
    if ids is None or not cursor.accept(PUA_CLOSE):
        return None
    return _Match(cursor.pos, marker_type, tuple(ids), MarkerForm.PUA)


def _read_group(cursor: _Cursor) -> list[str] | None:
    """One U+FFFC-delimited group of the object form: ids joined by `,` or `;` (blanks allowed
    only after a separator), up to the next U+FFFC. Stricter than the other forms on purpose: a
    stray U+FFFC is common in copied text, and prose between two of them must not become ids."""
    ids: list[str] = []
    while True:
        ident = cursor.run(_ID)
        if ident is None:
            return None
        ids.append(ident)
        char = cursor.peek()
        if char == OBJECT_DELIMITER:
            return ids
        if char is None or char not in _SEPARATORS:
            return None
        cursor.pos += 1
        cursor.skip_blanks()


def _match_object(text: str, start: int, final: bool) -> _Match | None:
    cursor = _Cursor(text, start)
    cursor.accept(OBJECT_DELIMITER)
    marker_type = _read_type(cursor)
    if marker_type is None or not cursor.accept(OBJECT_DELIMITER):
        return None
    ids = _read_group(cursor)
    if ids is None or not cursor.accept(OBJECT_DELIMITER):
        return None
    # U+FFFC both separates and closes, so the marker extends over every further group that is
    # followed by U+FFFC (a pua marker with U+E202 between ids becomes exactly that). Where the
    # text ends right after a closer, the next chunk could still extend the marker: needs more.
    end = cursor.pos
    try:
        while True:
            more = _read_group(cursor)
            if more is None or not cursor.accept(OBJECT_DELIMITER):
                break
            ids.extend(more)
            end = cursor.pos
    except _NeedMore:
        if not final:
            raise
    return _Match(end, marker_type, tuple(ids), MarkerForm.OBJECT)


_MATCHERS = {"[": _match_ascii, PUA_OPEN: _match_pua, OBJECT_DELIMITER: _match_object}


def parse(text: str, final: bool = False) -> Parsed:
    """Splits `text` into segments that cover it exactly, minus a `pending` tail.

    With `final` false (streaming), a marker cut off at the end is returned as `pending` and not
    as text; with `final` true the text is complete, and an unfinished marker is plain text.
    A lone high surrogate at the end while streaming (half of a character, cut by a host that
    counts UTF-16 units) is `pending` too, so the character is shown whole once the next chunk
    brings its other half. Malformed markers are text. Never raises on any string.

    `text` is read with its surrogate pairs joined (join_surrogate_pairs): `pending` prepended to
    the next chunk by concatenation gives the same text a JSON reader would.
    """
    text = join_surrogate_pairs(text)
    segments: list[Segment] = []
    shown_from = 0
    search_from = 0
    pending: str | None = None
    while True:
        opener = _OPENER.search(text, search_from)
        if opener is None:
            break
        start = opener.start()
        try:
            match = _MATCHERS[text[start]](text, start, final)
        except _NeedMore:
            if final:
                match = None
            else:
                pending = text[start:]
                break
        if match is None:
            search_from = start + 1
            continue
        if start > shown_from:
            segments.append(Segment(SegmentType.TEXT, text[shown_from:start], shown_from, start))
        kind = SegmentType.CITATION if match.marker_type == CITE else SegmentType.MARKER
        # Ids in order of first appearance, each once: a repeated id would only repeat a badge.
        ids = tuple(dict.fromkeys(match.ids))
        segments.append(Segment(kind, text[start : match.end], start, match.end, ids, match.form, match.marker_type))
        shown_from = search_from = match.end
    if pending is None and not final and text and is_high_surrogate(text[-1]):
        pending = text[-1]
    tail_end = len(text) if pending is None else len(text) - len(pending)
    if tail_end > shown_from:
        segments.append(Segment(SegmentType.TEXT, text[shown_from:tail_end], shown_from, tail_end))
    return Parsed(segments, pending)
