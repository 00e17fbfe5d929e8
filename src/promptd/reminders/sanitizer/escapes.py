"""Escape decoding for detection: HTML character references, percent-encoding, backslash escapes.

Domain layer: imports only the standard library; must not import promptd.rpc or promptd.methods.

`unit(text, i)` reads one unit of `text` at `i` (an escape sequence, or one character) and returns
its folded form and where it ends. Escapes nest: `&amp;lt;`, `%253C`, `\\\\u003c`, `%26lt;` and
`\\u0026lt;` all read as "<". Every pattern here is anchored and either bounded or a single greedy
run of one character class, so reading a unit never backtracks more than its own length.
"""

from __future__ import annotations

import html
import re
from html.entities import html5

from promptd.reminders.sanitizer.confusables import PROTOTYPES
from promptd.reminders.sanitizer.fold import fold, fold_all

# Characters that start an escape, in every width the sanitizer folds ("＆lt;" reads as "&lt;").
# TR39 look-alikes of the three count too ("∖" for "\\").
INTRODUCERS = {"&": "&", "\uff06": "&", "\ufe60": "&", "%": "%", "\uff05": "%", "\ufe6a": "%", "\\": "\\", "\uff3c": "\\", "\ufe68": "\\"} | {
    ch: prototype for ch, prototype in PROTOTYPES.items() if prototype in ("&", "%", "\\")
}

# How many times a decoded escape may itself start a further escape of another kind (`%26lt;`).
# Two levels is what double encoding produces; four leaves room without letting one unit run long.
MAX_NESTING = 4

# The longest HTML5 entity name is 31 characters ("CounterClockwiseContourIntegral").
_ENTITY = re.compile(r"(?:amp;)*(?:#[xX]0*([0-9a-fA-F]{1,6});?|#0*([0-9]{1,7});?|([A-Za-z][A-Za-z0-9]{1,31})(;?))", re.IGNORECASE | re.ASCII)
_PERCENT = re.compile(r"(?:25)*([0-9a-fA-F]{2})")
# JavaScript's escape() writes characters beyond Latin-1 as %uXXXX.
_PERCENT_U = re.compile(r"(?:25)*[uU]([0-9a-fA-F]{4})")
# The simple escapes: JSON's and JavaScript's, and Markdown's backslash before the punctuation a
# tag name's reader passes over (`<system\_reminder>` renders as `<system_reminder>`).
_BACKSLASH = re.compile(r"\\*+(?:[ux]\{0*([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|([0-7]{1,3})|([/\"'bfnrtv_.:*~-]))")
_SIMPLE_BACKSLASH = {"/": "/", '"': '"', "'": "'", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"} | {mark: mark for mark in "-_.:*~"}
# Entity names that browsers accept without the trailing ";" (the legacy ones), for `&ltfoo`.
_LEGACY = frozenset(name for name in html5 if not name.endswith(";"))


# HTML5 reads the numeric references &#128; to &#159; as Windows-1252 (`&#139;` is "‹", `&#154;`
# is "š"), as every browser and html.unescape do; the table is the standard library's.
_C1_REFERENCES = {value: html.unescape(f"&#{value};") for value in range(0x80, 0xA0)}


def _code_point(value: int) -> str | None:
    return chr(value) if value <= 0x10FFFF else None


def _reference(value: int) -> str | None:
    """What a numeric character reference stands for."""
    return _C1_REFERENCES.get(value) or _code_point(value)


def _entity(text: str, j: int) -> tuple[str, int] | None:
    m = _ENTITY.match(text, j)
    if m is None:
        return None
    hex_digits, dec_digits, name, semicolon = m.groups()
    if hex_digits is not None:
        decoded = _reference(int(hex_digits, 16))
        return (decoded, m.end()) if decoded else None
    if dec_digits is not None:
        decoded = _reference(int(dec_digits))
        return (decoded, m.end()) if decoded else None
    if semicolon and name + ";" in html5:
        return html5[name + ";"], m.end()
    if name in _LEGACY and not semicolon:
        return html5[name], m.end()
    # `&ltsystem-reminder`: a browser takes the longest legacy name that prefixes the run.
    name_start = m.start(3)
    for length in range(len(name) - 1, 1, -1):
        if name[:length] in _LEGACY:
            return html5[name[:length]], name_start + length
    return None


def _high_surrogate(value: int) -> bool:
    return 0xD800 <= value < 0xDC00


def _paired(high: int, low: int) -> str | None:
    """The character a UTF-16 surrogate pair stands for, or None when `low` is no low half."""
    if not 0xDC00 <= low < 0xE000:
        return None
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def _percent(text: str, j: int) -> tuple[str, int] | None:
    m = _PERCENT_U.match(text, j)
    if m is not None:
        value, end = int(m.group(1), 16), m.end()
        # JavaScript's escape() writes a character beyond the BMP as two halves (%uD83C%uDD82),
        # which unescape() joins again.
        if _high_surrogate(value) and end < len(text) and INTRODUCERS.get(text[end]) == "%":
            low = _PERCENT_U.match(text, end + 1)
            joined = _paired(value, int(low.group(1), 16)) if low is not None else None
            if low is not None and joined is not None:
                return joined, low.end()
        return chr(value), end
    m = _PERCENT.match(text, j)
    if m is None:
        return None
    first = int(m.group(1), 16)
    end = m.end()
    if first < 0x80:
        return chr(first), end
    # A UTF-8 sequence: %EF%BC%9C is the fullwidth "<".
    if 0xC0 <= first < 0xE0:
        more = 1
    elif 0xE0 <= first < 0xF0:
        more = 2
    elif 0xF0 <= first < 0xF8:
        more = 3
    else:
        return None
    raw = bytearray([first])
    for _ in range(more):
        if end >= len(text) or INTRODUCERS.get(text[end]) != "%":
            return None
        m = _PERCENT.match(text, end + 1)
        if m is None:
            return None
        raw.append(int(m.group(1), 16))
        end = m.end()
    try:
        return raw.decode("utf-8"), end
    except UnicodeDecodeError:
        return None


def _backslash(text: str, j: int) -> tuple[str, int] | None:
    m = _BACKSLASH.match(text, j)
    if m is None:
        return None
    braced, four, eight, two, octal, simple = m.groups()
    if simple is not None:
        return _SIMPLE_BACKSLASH[simple], m.end()
    half = four or braced
    if half is not None and _high_surrogate(int(half, 16)) and m.end() < len(text) and INTRODUCERS.get(text[m.end()]) == "\\":
        # JSON and JavaScript write a character beyond the BMP as two halves (\ud83c\udd82, what
        # json.dumps gives by default; JavaScript also \u{d83c}\u{dd82}), which their readers
        # join again.
        low = _BACKSLASH.match(text, m.end() + 1)
        low_half = (low.group(2) or low.group(1)) if low is not None else None
        joined = _paired(int(half, 16), int(low_half, 16)) if low_half is not None else None
        if low is not None and joined is not None:
            return joined, low.end()
    digits = braced or four or eight or two
    decoded = _code_point(int(digits, 16)) if digits is not None else chr(int(octal, 8))
    return (decoded, m.end()) if decoded else None


_DECODERS = {"&": _entity, "%": _percent, "\\": _backslash}


# The most characters of an escape written wholly in another escape's form (`%26%23139%3B` is
# `&#139;` percent-encoded) that are decoded to read it: the longest HTML5 entity and its "&", ";".
MAX_ESCAPED_ESCAPE = 40
_ESCAPE_BODY = "#;{}"
_NUMBER_START = "#xX"


def _in_outer_form(text: str, start: int, kind: str, inner: str) -> tuple[str, int] | None:
    """The `inner` escape whose characters follow `start`, each written as a `kind` escape or as
    itself (a URL decoded once, then read as HTML: `%26%23139%3B` -> `&#139;` -> "‹")."""
    chars: list[str] = []
    ends: list[int] = []
    at = start
    while at < len(text) and len(chars) < MAX_ESCAPED_ESCAPE:
        ch, after = text[at], at + 1
        if INTRODUCERS.get(ch) == kind:
            one = _DECODERS[kind](text, after)
            if one is None:
                break
            ch, after = one
        # Only what an escape's body is made of: a run of `%26` stops at its second one.
        if len(ch) != 1 or not (ch.isascii() and (ch.isalnum() or ch in _ESCAPE_BODY)):
            break
        at = after
        if ch == "0" and chars and chars[0] == "#" and chars[-1] in _NUMBER_START and len(chars) <= 2:
            # A reference's leading zeros (`&#00060;`), which browsers take in any number, are
            # passed over, so no count of them exhausts the budget; the digits after stand alone.
            if ends:
                ends[-1] = at
            continue
        chars.append(ch)
        ends.append(at)
    decoded = _DECODERS[inner]("".join(chars), 0)
    if decoded is None or decoded[1] == 0:
        return None
    return decoded[0], ends[decoded[1] - 1]


def decode(text: str, i: int) -> tuple[str, int] | None:
    """The escape starting at `i` (whose character is an introducer) decoded, with its end."""
    kind = INTRODUCERS[text[i]]
    decoded = _DECODERS[kind](text, i + 1)
    if decoded is None:
        return None
    for _ in range(MAX_NESTING):
        value, end = decoded
        inner = INTRODUCERS.get(value)
        if inner is None:
            break
        further = _DECODERS[inner](text, end)
        if inner != kind:
            # Read as the decoder of the outer form would leave it, where that reads further
            # (`%26lt%3B` is `&lt;` once percent-decoded, not `&lt` and a `%3B`).
            outer = _in_outer_form(text, end, kind, inner)
            if outer is not None and (further is None or outer[1] > further[1]):
                further = outer
        if further is None:
            break
        decoded = further
    return decoded


def unit_readings(text: str, i: int) -> tuple[tuple[str, ...], int]:
    """Every way the unit at `i` may read (see fold.fold_all), with its end."""
    ch = text[i]
    if ch in INTRODUCERS:
        decoded = decode(text, i)
        if decoded is not None:
            value, end = decoded
            if len(value) == 1:
                return fold_all(value), end
            return ("".join(fold(c) for c in value),), end
    return fold_all(ch), i + 1


def unit(text: str, i: int) -> tuple[str, int]:
    """The folded unit at `i`: a decoded escape or one character; returns (folded, end)."""
    ch = text[i]
    if ch in INTRODUCERS:
        decoded = decode(text, i)
        if decoded is not None:
            value, end = decoded
            return "".join(fold(c) for c in value), end
    return fold(ch), i + 1
