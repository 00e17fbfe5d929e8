"""Small plain-text helpers shared by domain modules.

Domain layer: imports nothing from promptd, so any module may use it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import NamedTuple

ELLIPSIS = "…"


def one_line(text: str, limit: int) -> str:
    """`text` as a single line: every run of whitespace (line breaks included) becomes one space,
    and a line longer than `limit` characters is cut to `limit`, its last character an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + ELLIPSIS


def has_astral(text: str) -> bool:
    """Whether `text` holds a character beyond the Basic Multilingual Plane. Much faster than a
    regular expression: ASCII is known without a look, and the UTF-16 encoding of other text is a
    near-copy whose length tells."""
    return not text.isascii() and len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)


# A high surrogate code point right before a low one. Text read from JSON holds a pair as one
# character, so two such halves side by side only arise where something between them was removed
# or where two texts meet; written out, they are one escaped pair, which every reader joins.
GLUED_HALVES = re.compile("[\ud800-\udbff][\udc00-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"


class NonAscii(NamedTuple):
    """The non-ASCII characters of a text, in order (usually a few), and whether a lone surrogate
    is among them: what the scans that look for non-ASCII characters read instead of the text."""

    chars: str
    surrogates: bool


_ASCII_BYTES = bytes(range(0x80))


def non_ascii(text: str) -> NonAscii:
    """`NonAscii` of `text`, at C speed: its UTF-8 form without the ASCII bytes leaves every other
    character whole (a character class over the text reads it one character at a time, several
    times slower). A lone surrogate has no strict UTF-8 form, which is how one is noticed."""
    if text.isascii():
        return NonAscii("", False)
    try:
        raw, surrogates = text.encode("utf-8"), False
    except UnicodeEncodeError:
        raw, surrogates = text.encode("utf-8", "surrogatepass"), True
    return NonAscii(raw.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass"), surrogates)


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate (JSON may carry one)."""
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def separate_halves(text: str) -> str:
    """`text` with each half of a glued pair made U+FFFD, for any text promptd cut something out
    of: otherwise a JSON reader joins the halves into a character no check ever read."""
    if not has_surrogate(text) or not GLUED_HALVES.search(text):
        return text
    return GLUED_HALVES.sub(REPLACEMENT_CHARACTER * 2, text)


def shared_prefix_length(a: str, b: str) -> int:
    """How many characters `a` and `b` share from the start. Halving on slice comparisons, each a
    C-speed memory compare: os.path.commonprefix walks character by character in Python, which
    cost more than rendering the prompt twice."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


# ---- surrogates --------------------------------------------------------------------------------

# JSON text may carry lone surrogates (`"\ud83d"`): a host that cuts a string by UTF-16 length sends
# half of an astral character in one chunk and the other half in the next. promptd keeps them as the
# code points they are, and treats them as ordinary characters that are not letters.
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def is_high_surrogate(char: str) -> bool:
    """Whether `char` is the first half of a UTF-16 surrogate pair (U+D800..U+DBFF)."""
    return "\ud800" <= char <= "\udbff"


def join_surrogate_pairs(text: str) -> str:
    """`text` with every high surrogate followed by a low one made the one character the pair
    encodes, as a JSON reader makes `"\ud83d\ude00"`; lone surrogates stay. A Python str only holds
    such a pair when two halves of a cut character were joined by concatenation."""
    if text.isascii() or _SURROGATE_PAIR.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def readable_utf8(text: str) -> bytes:
    """`text` as UTF-8 for a file a person or a model reads: a lone surrogate has no UTF-8 form, so
    it is written as U+FFFD, the character such readers show for one (pairs are joined first)."""
    return _LONE_SURROGATE.sub("\ufffd", join_surrogate_pairs(text)).encode("utf-8")


# ---- "did you mean" ---------------------------------------------------------------------------

# How alike two names must be to be offered (difflib's ratio): 0.75 pairs `is_non_interactve`
# with `is_non_interactive` and `working_dir` with `working_directory`, and `workdir` with nothing.
SIMILARITY = 0.75
MAX_SUGGESTIONS = 3


def suggest(name: object, candidates: Iterable[object]) -> list[str]:
    """The likeliest intended names for a misspelled `name`, best first (at most three): context
    fields, template variables, settings, commands. Here, at the base, so that the configuration
    and the command line can use it as the template engine and the lint do. Only names are
    compared: a number (`items[5]`) or any other key that is not a string has no suggestions, and
    candidates that are not strings are never offered."""
    if not isinstance(name, str):
        return []
    import difflib  # only when a name is misspelled, not at every start

    pool = sorted({c for c in candidates if isinstance(c, str) and c != name})
    return difflib.get_close_matches(name, pool, n=MAX_SUGGESTIONS, cutoff=SIMILARITY)


# ---- offsets in the unit a host counts in ------------------------------------------------------


# What an offset counts (initialize's offset_unit). promptd's own offsets are code points (Python's
# str indices, Go's []rune); a JavaScript host slices strings by UTF-16 code units, a Go or Rust
# host by UTF-8 bytes.
class OffsetUnit(StrEnum):
    CODE_POINTS = "code_points"
    UTF16_UNITS = "utf16_units"
    UTF8_BYTES = "utf8_bytes"


CODE_POINTS = OffsetUnit.CODE_POINTS
UTF16_UNITS = OffsetUnit.UTF16_UNITS
UTF8_BYTES = OffsetUnit.UTF8_BYTES
OFFSET_UNITS = tuple(OffsetUnit)


def _utf16_units(text: str) -> int:
    # surrogatepass: a lone surrogate (possible in a str decoded from JSON) is one unit, as in JS.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class OffsetConverter:
    """Converts code-point offsets into `text` to `unit`: `at(i)` is the length, in `unit`, of
    `text[:i]`. Queries in increasing order (segments, spans and blocks are reported in order) cost
    linear time overall: the converter walks from the previous query, forwards or backwards."""

    __slots__ = ("_text", "_measure", "_cp", "_units")

    def __init__(self, text: str, unit: str) -> None:
        if unit not in OFFSET_UNITS:
            raise ValueError(f"unknown offset unit {unit!r}")
        self._text = text
        # ASCII text (the common case) and code points need no conversion at all.
        self._measure = None if unit == CODE_POINTS or text.isascii() else (_utf16_units if unit == UTF16_UNITS else _utf8_bytes)
        self._cp = 0
        self._units = 0

    def at(self, offset: int) -> int:
        if self._measure is None:
            return offset
        if offset >= self._cp:
            self._units += self._measure(self._text[self._cp : offset])
        else:
            self._units -= self._measure(self._text[offset : self._cp])
        self._cp = offset
        return self._units

    __call__ = at


def offsets_in(text: str, unit: str) -> OffsetConverter:
    """A converter from code-point offsets into `text` to offsets in `unit` (see OffsetConverter)."""
    return OffsetConverter(text, unit)
