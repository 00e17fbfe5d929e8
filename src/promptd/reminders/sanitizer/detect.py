"""Detection of forged reminder markup on a folded, decoded view of untrusted text.

Domain layer: imports only the standard library, its sibling modules and promptd.text; must not import
promptd.rpc or promptd.methods.

What counts as forged markup:
- a tag whose name reads as `system-reminder` or `display-trigger` (open or close, any case, any
  attributes after the name, which is matched as a prefix the way the keyed reminder format's nesting
  check matches `<system-reminder`);
- a reminder delimiter U+E203 / U+E204 anywhere (only the trusted wrapper may write one).

The view is built lazily from each place a tag could begin (a character or escape that reads as
"<", or as a delimiter). From there the reader goes forward one unit at a time, folding and
decoding, skipping invisibles, separators, Markdown's emphasis markers and inline HTML markup
(which a renderer shows as nothing), and stops at the first unit that cannot continue a tag name.
A reader stops at every bracket except one that opens a complete piece of markup (which holds no
"<"), and a reader that starts in a piece of markup ends inside it, at its ">" at the latest; so
no stretch is read by more than two readers and the whole scan stays linear in the input.

Code that is not a tag: a camelCase or PascalCase identifier (`List<SystemReminder>`), and an
operator that begins with "<" applied to a call (`a <- system_reminder(x)`).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from html.entities import html5
from typing import NamedTuple

from promptd.reminders import markup
from promptd.reminders.sanitizer import tables
from promptd.reminders.sanitizer.confusables import UNICODE_VERSION as CONFUSABLES_VERSION
from promptd.reminders.sanitizer.derivation import RULE_BRACKETS, SKIPPED, Tables, compute, names
from promptd.reminders.sanitizer.escapes import INTRODUCERS, decode, unit, unit_readings
from promptd.reminders.sanitizer.fold import fold, fold_all
from promptd.text import has_astral, non_ascii

PUA_OPEN = markup.PUA_OPEN
PUA_CLOSE = markup.PUA_CLOSE
TAG_NAMES = markup.TAG_NAMES


def _derived() -> Tables:
    """The tables derivation.py defines: as tables.py holds them when it was generated from the
    Unicode data of the running Python and the committed confusables table, else computed now
    (tens of milliseconds more at import, the same tables)."""
    if tables.UNIDATA_VERSION == unicodedata.unidata_version and tables.CONFUSABLES_VERSION == CONFUSABLES_VERSION:
        return Tables(*(getattr(tables, field.upper()) for field in Tables._fields))
    return compute()


_DERIVED = _derived()

# Markdown's code-span marker, passed over too (`<sys`tem`-reminder>`): only as the ASCII
# character itself, since it folds to the apostrophe, which is not skipped.
_MARKDOWN_MARKERS = "`"
# Inline HTML markup that a renderer shows as nothing: an open or closing tag of any name, or a
# comment (CommonMark's raw HTML, which Markdown renderers pass through and browsers hide), inside
# a tag name: `<sys<b></b>tem-reminder>`, `<sys<span class="x">tem-reminder>`, `<sys<!---->tem…`.
# No piece holds "<" (quoted values included), so a reader that starts inside one ends in it.
# Every quantifier is possessive and no run can be matched two ways, so a failed match costs at
# most the distance to the next "<".
_MARKUP = re.compile(
    r"<(?:"
    r"/[A-Za-z][A-Za-z0-9-]*+[ \t\r\n]*+>"
    r"|[A-Za-z][A-Za-z0-9-]*+"
    r"(?:[ \t\r\n]++[A-Za-z_:][A-Za-z0-9_.:-]*+(?:[ \t\r\n]*+=[ \t\r\n]*+(?:\"[^\"<]*+\"|'[^'<]*+'|[^ \t\r\n\"'=<>`]++))?+)*+"
    r"[ \t\r\n]*+/?>"
    r"|!--(?:[^<-]++|-(?!->))*+-->"
    r")"
)

_COMPLETE, _PREFIXES = names()

# Every character that folds to "<" (checked against all of Unicode by the tests).
BRACKETS = "".join(sorted({"<", "\uff1c", "\ufe64", *_DERIVED.table_brackets, *RULE_BRACKETS}))
# What an escape must decode to for its place to be worth reading: a bracket, a delimiter, or an
# introducer of a further escape (double encoding).
INTERESTING = BRACKETS + PUA_OPEN + PUA_CLOSE + "".join(INTRODUCERS)


def _ranges(chars: str) -> str:
    """`chars` as the inside of a regex character class, runs of code points as ranges."""
    points = sorted({ord(c) for c in chars})
    out: list[str] = []
    i = 0
    while i < len(points):
        j = i
        while j + 1 < len(points) and points[j + 1] == points[j] + 1:
            j += 1
        low, high = re.escape(chr(points[i])), re.escape(chr(points[j]))
        out.append(low if i == j else low + high if j == i + 1 else low + "-" + high)
        i = j + 1
    return "".join(out)


def _fewest_units() -> int:
    """The fewest characters a name can be written in: one per folded letter, or one for each
    folded run a single plain character reads as (TR39 reads "m" as "rn")."""
    longer = {folded for folded in _ASCII_TABLE.values() if folded is not None and len(folded) > 1}

    def fewest(word: str) -> int:
        best = [0] + [len(word) + 1] * len(word)
        for end in range(1, len(word) + 1):
            best[end] = best[end - 1] + 1
            for run in longer:
                if word[:end].endswith(run):
                    best[end] = min(best[end], best[end - len(run)] + 1)
        return best[len(word)]

    return min(fewest(word) for word in _COMPLETE if not word.startswith("/"))


@functools.cache
def _name_pattern() -> str:
    """What may follow a bracket where a tag name could begin, for its look-ahead: fewer
    characters of the names' alphabet than a name needs, then one more, or a unit only the reader
    can judge (an escape introducer, a non-ASCII character not judged here, a piece of inline
    markup: `<sys<b></b>tem-reminder>`); with what the reader passes over between them
    (possessively: it is never a bracket, so two brackets' look-aheads never cover the same run).
    A superset of what the reader accepts, checked by tests against a scan that looks
    everywhere. Ordinary markup (`</div>`, `<dl>`), runs of brackets and near-misses
    (`<system-reminde<`) fail here in the regex engine, where a call of the reader per bracket
    made them slow."""
    skipped, single = _DERIVED.judged_skipped, _DERIVED.judged_single
    alphabet = set("".join(word for word in _COMPLETE))
    letters = [chr(code) for code, folded in _ASCII_TABLE.items() if folded is not None and chr(code) != "<" and all(c in alphabet for c in folded)]
    letters.extend(_DERIVED.name_letters)
    ascii_skip = "".join(c for c in map(chr, range(0x80)) if _ASCII_TABLE.get(ord(c), "x") is None)
    skip = "[" + _ranges(ascii_skip + skipped) + "]*+"
    letter = "[" + _ranges("".join(letters)) + "]"
    # Non-ASCII characters judged here that are no letter of a name end it, as brackets do; the
    # others go to the reader.
    brackets = "".join(c for c in BRACKETS if not c.isascii() and set(fold_all(c)) == {"<"})
    # An escape of "<" ends a name as "<" does, so it is not handed over (`<system-reminde&lt;`).
    # Only what escapes.py reads as exactly "<" (its digit counts: \u four, \U eight, \x two, up
    # to three octal digits, %u four, % two; an entity named lt or LT, nothing longer): an escape
    # that merely begins so (`\u03c1`, `\741`) spells a letter and goes to the reader.
    escapes = (
        r"&(?!(?:amp;?)*(?:lt|LT)(?:;|(?![A-Za-z0-9])))"
        r"|%(?!(?:25)*(?:3[cC]|[uU]003[cC]))"
        r"|\\(?!\\*+(?:[ux]\{0*3[cC]\}|u003[cC]|U0000003[cC]|x3[cC]|0?74(?![0-7])))"
    )
    handed_over = escapes + "|[^" + _ranges("".join(map(chr, range(0x80))) + skipped + single + brackets) + "]|" + _MARKUP.pattern
    units = _fewest_units()
    return skip + "(?:/" + skip + ")?(?:" + letter + skip + "){0," + str(units - 1) + "}+(?:" + letter + "|" + handed_over + ")"


def _trie(words: list[str]) -> str:
    """An alternation of `words` (digits and letters) as a prefix tree: a case-insensitive
    alternation tries every branch, a tree one per distinct next character."""
    if not words:
        return "(?!)"
    heads: dict[str, list[str]] = {}
    ends = False
    for word in sorted(set(words)):
        if word:
            heads.setdefault(word[0], []).append(word[1:])
        else:
            ends = True
    branches = [head + (_trie(tails) if any(tails) else "") if all(tails) or not any(tails) else head + "(?:" + _trie([t for t in tails if t]) + ")?" for head, tails in heads.items()]
    tree = "(?:" + "|".join(branches) + ")"
    return tree + "?" if ends else tree


# The ASCII characters a forged tag or delimiter can begin with: the bracket and the escape
# introducers, each the literal first character of its candidate pattern.
_ASCII_FIRSTS = "<&%\\"


@functools.cache
def _ascii_sources() -> dict[str, str]:
    """Where a forged tag or delimiter could begin, by its first ASCII character: one regex per
    introducer or bracket, each beginning with its literal character so the regex engine skips
    ahead at memchr speed. Built, and each compiled (`_ascii_pattern`), when a text first holds
    the character: compiling all four was a third of this module's import, which a host's first
    turn waited for even when its text held none of them.

    Together they let through every place the reader could accept and skip the common harmless
    ones (`&quot;`, `%20`, `\\n`, `i < n`, `<div`), which is what makes ordinary code, logs and
    JSON cheap. The tests replay random inputs through them and through a pattern that marks every
    bracket and introducer, and require the same hits. Runs of `&amp;`, `%25` and backslashes are
    matched whole, so a long run is read once rather than from each of its characters.
    """
    points = sorted({ord(ch) for ch in INTERESTING})
    # Only a value holding a bracket can fold to "<" (BRACKETS holds every character whose fold is
    # "<"), so the others are not folded.
    names = sorted(
        {name.rstrip(";") for name, value in html5.items() if value in INTERESTING or (not _BRACKET_SET.isdisjoint(value) and "".join(fold(c) for c in value) == "<")},
        # Longest first (the alternation takes the first that matches), then by name, so the
        # pattern is the same text in every process.
        key=lambda name: (-len(name), name),
    )
    # Escapes are matched case-insensitively (`&LT;`, `%3c`, `\\U0000003C`) after their literal
    # introducer; the bracket's look-ahead is not, because Unicode case-insensitive classes also
    # match letters such as the dotless i or the long s, which must stay readers' business.
    # An escape of "<" itself is followed by the bracket's look-ahead (a near-miss after `&lt;`
    # fails in the regex engine too); the other escapes are left to the reader. Each kind is
    # guarded by the characters it can go on with, so a run of introducers fails at once.
    name = "(?=" + _name_pattern() + ")"
    lt_names = [n for n in names if n.lower() == "lt"]
    entity = (
        r"&(?=[#"
        + _ranges("".join({n[0].lower() + n[0].upper() for n in names}) + "aA")
        + r"])(?ai:(?:amp;?)*)(?:(?ai:"
        + "|".join(lt_names)
        + ");?"
        + name
        + "|(?ai:#|"
        + "|".join(n for n in names if n.lower() not in ("amp", "lt"))
        + "))"
    )
    # Any percent byte that is ASCII-interesting, or a UTF-8 lead byte (the multi-byte forms).
    other_bytes = _trie([f"{p:02x}" for p in points if p < 0x80 and p != 0x3C])
    # The hex forms of the others, and the high half of each such character beyond the BMP: JSON
    # and JavaScript write those as two halves (\ud800\udf2d, \u{d800}\u{df2d}), which the
    # reader joins.
    high_halves = sorted({0xD800 + ((p - 0x10000) >> 10) for p in points if p > 0xFFFF})
    other_hexes = _trie([f"{p:x}" for p in points if p != 0x3C] + [f"{h:x}" for h in high_halves])
    percent = r"%(?=[0-9a-fA-FuU])(?ai:(?:25)*)(?:(?ai:3c|u0*3c)" + name + r"|(?ai:" + other_bytes + r"|[c-f][0-9a-f]|u0*(?:" + other_hexes + r")))"
    # A run of backslashes is entered only at its first backslash (the look-behind) and read
    # possessively: tried from every backslash of the run, it would be quadratic.
    other_octals = _trie([f"{p:o}" for p in points if p < 0o400 and p != 0x3C])
    backslash = (
        r"\\(?<!\\\\\\\\)(?=\\*+[0-7uUxX])(?ai:\\*+)(?:(?ai:[ux]\{0*3c\}|u0*3c|x3c|0*74)"
        + name
        + r"|(?ai:[ux]\{0*(?:"
        + other_hexes
        + r")\}|u0*(?:"
        + other_hexes
        + r")|x(?:"
        + other_bytes
        + r")|0*(?:"
        + other_octals
        + r")))"
    )
    bracket = "<" + name
    # Each under its first character (the backslash pattern's is the escaped "\\"), which must be
    # in a text for the pattern to match there.
    sources = {source[0]: source for source in (bracket, entity, percent, backslash)}
    return sources


@functools.cache
def _ascii_pattern(first: str) -> re.Pattern[str]:
    return re.compile(_ascii_sources()[first])


class Hit(NamedTuple):
    """Forged markup found in the text.

    For a tag, `start`/`end` span its bracket and `name` is where the first letter of its name
    begins (after any "/", separators and invisibles): the sanitizer renames the tag there. When
    markup comes before the first letter (`<<b></b>system-reminder>`), `name` is where that markup
    begins: only separators and invisibles lie between the bracket and it, so a rename there (or
    anywhere before it, where a split stream puts it) ends the name, while a rename inside the
    markup could leave it markup; and the hits stay in the order of their edits, since a hit
    inside that markup starts after it. For a delimiter, `start`/`end` span the delimiter (or the
    escape that spells it) and `name` == `end`.
    """

    start: int
    end: int
    kind: str  # "tag" or "delimiter"
    folded: str  # "<" for a tag, the delimiter character for a delimiter
    name: int


# Code that merely names such a type is not a tag: a camelCase or PascalCase identifier written
# in plain ASCII letters (`List<DisplayTrigger>`, `i<displayTriggers.length`). A name with a
# separator, in one case, disguised or escaped is a tag wherever it stands (docs/security.md).
_IDENTIFIERS = frozenset({"systemReminder", "SystemReminder", "displayTrigger", "DisplayTrigger"})

# Folded forms of the plain ASCII characters, read without the general unit reader (the hot path
# for ordinary markup such as `<div`); escape introducers are left out so they still decode.
# The code-span marker reads as nothing, like invisibles; "<" is read by the reader itself (markup).
_ASCII_FOLD = {chr(c): "" if chr(c) in _MARKDOWN_MARKERS else fold(chr(c)) for c in range(0x80) if chr(c) not in INTRODUCERS}
_BRACKET_SET = frozenset(BRACKETS)
# The same folding as a str.translate table: skipped characters deleted, the rest folded.
_ASCII_TABLE: dict[int, str | None] = {ord(c): (None if not f or all(x in SKIPPED for x in f) else f) for c, f in _ASCII_FOLD.items()}
_ALPHABET = frozenset("".join(_PREFIXES))
# ASCII characters a tag name (with its "/" and separators) can be written in: the fast reader
# takes a run of them at once. Group 1 is the piece of markup that follows the run, if any (in the
# same match: a second call for it cost a sixth of the time of near-miss tags in a row).
_NAME_RUN = re.compile("[" + re.escape("".join(chr(o) for o, f in _ASCII_TABLE.items() if f is None or all(x in _ALPHABET for x in f))) + "]*+(?:(?=(" + _MARKUP.pattern + ")))?")
_LEAD = "".join(chr(o) for o, f in _ASCII_TABLE.items() if f is None) + "/"
_COMPLETE_TUPLE = tuple(sorted(_COMPLETE))
_PREFIXES_OR_EMPTY = _PREFIXES | {""}
_IDENTIFIER_TUPLE = tuple(sorted(_IDENTIFIERS))


def tag_name_at(text: str, pos: int) -> int | None:
    """Where the tag name begins when the text from `pos` (just after a bracket) reads as one of
    the tag names and is not an identifier; None otherwise.

    The common case is decided at C speed: the run of plain ASCII name characters from `pos`,
    folded with str.translate. Only when that run ends at an escape, a non-ASCII character or a
    piece of markup while it still reads as the start of a name does the unit-by-unit reader take
    over."""
    run = _NAME_RUN.match(text, pos)
    written = run.group() if run else ""
    folded = written.translate(_ASCII_TABLE)
    if folded.startswith(_COMPLETE_TUPLE):
        offset = len(written) - len(written.lstrip(_LEAD))
        return None if written.startswith(_IDENTIFIER_TUPLE, offset) else pos + offset
    end = pos + len(written)
    if end < len(text) and folded in _PREFIXES_OR_EMPTY and (not text[end].isascii() or text[end] in INTRODUCERS or (run is not None and run.group(1) is not None)):
        # Go on unit by unit from where the run stopped, in the state the run left.
        offset = len(written) - len(written.lstrip(_LEAD))
        name = written[offset:]
        if offset == len(written):
            return _read_tag_name(text, end, folded, -1, "")
        return _read_tag_name(text, end, folded, pos + offset, name if name.isalpha() else None)
    return None


def name_units(text: str, pos: int) -> list[int]:
    """Where each unit the reader reads from `pos` (just after a bracket) begins, a piece of
    markup counting as one, up to the unit that completes a tag name: the places where text put
    in breaks the name as this module reads it (text put inside a unit, within markup or an
    escape, could be read as part of it)."""
    units: list[int] = []
    _read_tag_name(text, pos, "", -1, "", units)
    return units


def _read_tag_name(text: str, pos: int, seen: str, name_start: int, written: str | None, units: list[int] | None = None) -> int | None:
    """`tag_name_at` from `pos`, one folded unit (a character or a decoded escape) at a time.

    `seen` is the folded name read so far, `name_start` where its first letter is (-1: none yet),
    `written` the name exactly as written while every unit of it is one plain ASCII letter, else
    None. Returns where the tag is renamed: the name's first letter, or the first piece of markup
    when one comes before it (see Hit)."""
    n = len(text)
    plain = _ASCII_FOLD
    # Every folded name the units so far may spell; usually one (see fold.fold_all).
    seen_all = {seen}
    markup_before = -1
    while pos < n:
        unit_start = pos
        if units is not None:
            units.append(pos)
        ch = text[pos]
        if ch == "<":
            markup = _MARKUP.match(text, pos)
            if markup is None:
                return None  # a bracket ends every name
            if name_start >= 0:
                written = None  # a name with markup inside is not an identifier
            elif markup_before < 0:
                markup_before = pos
            pos = markup.end()
            continue
        folded = plain.get(ch)
        if folded is None:
            readings, pos = unit_readings(text, pos)
            folded = readings[0]
        else:
            readings = (folded,)
            pos += 1
        letter = folded not in ("", "/") and not all(c in SKIPPED for c in folded)
        if letter and name_start < 0:
            name_start = unit_start
        if name_start >= 0 and written is not None:
            written = written + ch if (pos == unit_start + 1 and ch.isascii() and ch.isalpha()) else None
        following: set[str] = set()
        for before in seen_all:
            for reading in readings:
                after = _advance(before, reading)
                if after is _COMPLETED:
                    if written is not None and written in _IDENTIFIERS:
                        return None
                    if markup_before >= 0:
                        return markup_before
                    return name_start if name_start >= 0 else unit_start
                if after is not None:
                    following.add(after)
        if not following:
            return None
        seen_all = following
    return None


_COMPLETED = "\x00complete"


def _advance(seen: str, folded: str) -> str | None:
    """`seen` read on by `folded`: _COMPLETED when it spells a whole name, None when it can no
    longer become one, else the longer prefix."""
    for c in folded:
        if c in SKIPPED:
            continue
        seen += c
        if seen in _COMPLETE:
            return _COMPLETED
        if seen not in _PREFIXES:
            return None
    return seen


# The non-ASCII characters that can begin a forged tag or delimiter.
_OTHER_STARTS = "".join(c for c in sorted(set(INTERESTING)) if not c.isascii())
_OTHER_BMP_STARTS = "".join(c for c in _OTHER_STARTS if ord(c) <= 0xFFFF)


@functools.cache
def _other_start(ch: str) -> re.Pattern[str]:
    """The pattern for a non-ASCII start: a bracket with the ASCII bracket's look-ahead, anything
    else as it is. Compiled when a text first holds the character."""
    return re.compile(re.escape(ch) + ("(?=" + _name_pattern() + ")" if ch in _BRACKET_SET else ""))


def _candidate_starts(text: str, others: str | None) -> list[int]:
    """Where the candidate patterns (`_ascii_sources`, `_other_start`) match in `text`, in order. Each pattern begins with a
    literal, so the regex engine skips to the next one at memchr speed; a pattern whose first
    character is absent is not run at all, and each non-ASCII start present is searched as a
    literal of its own (a character class is read one character at a time, ten times slower).
    `others` is `text`'s non-ASCII characters (promptd.text.non_ascii), when the caller has them."""
    found = [[match.start() for match in _ascii_pattern(first).finditer(text)] for first in _ASCII_FIRSTS if first in text]
    if not text.isascii():
        present = non_ascii(text).chars if others is None else others
        for ch in _OTHER_STARTS if has_astral(present) else _OTHER_BMP_STARTS:
            if ch in present:
                found.append([match.start() for match in _other_start(ch).finditer(text)])
    found = [starts for starts in found if starts]
    if len(found) <= 1:
        return found[0] if found else []
    # Sorted runs: the sort merges them in linear time.
    return sorted(itertools.chain.from_iterable(found))


# An operator that begins with "<" applied to a call is code, not a tag: `<-` (R, Go, Scala and
# Haskell comprehensions), `<~`, `<--`, and the shift `<<` (read from its second "<", as is R's
# `<<-`): `a <- system_reminder(x)`, `a <-display_trigger.load(y)`, `out << system_reminder(x)`.
# The name must be written as a plain ASCII identifier or dotted path that spells a tag name in
# letters, "_" and "." only, directly followed by "(". `<=` and `<<=` never were tags ("=" ends a
# name); a disguised or hyphenated name is a tag wherever it stands, and so is a bare `<` before a
# call (`i<system_reminder_count(x)`: the one-character operator is also how a tag begins).
_OPERATOR_CALL = re.compile(r"([-~]*+)[ \t]*+([A-Za-z_][A-Za-z0-9_.]*+)\(")
_CALLED_NAMES = tuple(name.replace("-", "") for name in TAG_NAMES)


def _is_operator_call(text: str, start: int, after_bracket: int, name: int) -> bool:
    """Whether the tag found at `start` is an operator applied to a call (see _OPERATOR_CALL)."""
    call = _OPERATOR_CALL.match(text, after_bracket)
    if call is None or call.start(2) != name:
        return False
    # The operator is "<" itself, or an escape of it (code shown in HTML or JSON); a look-alike
    # bracket is no operator of any language.
    if text[start] != "<":
        decoded = decode(text, start) if text[start] in INTRODUCERS else None
        if decoded is None or decoded[0] != "<":
            return False
    if not call.group(1) and not (text[start] == "<" and start > 0 and text[start - 1] == "<"):
        return False
    return call.group(2).replace("_", "").replace(".", "").lower().startswith(_CALLED_NAMES)


def scan(text: str, candidates: re.Pattern[str] | None = None, others: str | None = None) -> list[Hit]:
    """All forged markup in `text`, in order. `others` is `text`'s non-ASCII characters
    (promptd.text.non_ascii), when the caller has them; `candidates` is replaceable for the tests
    only."""
    hits: list[Hit] = []
    resume = 0
    for start in _candidate_starts(text, others) if candidates is None else [match.start() for match in candidates.finditer(text)]:
        if start < resume:
            continue  # inside an escape already read as one unit
        if text[start] in _BRACKET_SET:
            folded, end = "<", start + 1
        else:
            folded, end = unit(text, start)
        resume = end
        if folded == "<":
            name = tag_name_at(text, end)
            if name is not None and not _is_operator_call(text, start, end, name):
                hits.append(Hit(start, end, "tag", folded, name))
        elif folded in (PUA_OPEN, PUA_CLOSE):
            hits.append(Hit(start, end, "delimiter", folded, end))
    return hits
