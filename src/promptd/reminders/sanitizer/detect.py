"""Detection of forged reminder markup on a folded, decoded view of untrusted text.

Domain layer: imports only the standard library and its sibling modules; must not import
promptd.rpc or promptd.methods.

What counts as forged markup:
- a tag whose name reads as `system-reminder` or `display-trigger` (open or close, any case, any
  attributes after the name, which is matched as a prefix the way the seed-000 formatter's nesting
  check matches `<system-reminder`);
- a reminder delimiter U+E203 / U+E204 anywhere (only the trusted wrapper may write one).

The view is built lazily from each place a tag could begin (a character or escape that reads as
"<", or as a delimiter). From there the reader goes forward one unit at a time, folding and
decoding, skipping invisibles and separators, and stops at the first unit that cannot continue a
tag name. A reader stops at every bracket, so two readers never cover the same stretch twice and
the whole scan stays linear in the input.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from html.entities import html5

from promptd.reminders.sanitizer.escapes import INTRODUCERS, unit
from promptd.reminders.sanitizer.fold import CONFUSABLES, fold

PUA_OPEN = "\ue203"
PUA_CLOSE = "\ue204"
TAG_NAMES = ("system-reminder", "display-trigger")

# Characters the reader passes over between "<", "/" and the letters of a name: folded
# whitespace, the word separators people use in tag names, and invisibles (which fold to "").
_SKIPPED = frozenset(" -_.:")

# Letter look-alikes inside ASCII itself: "I"/"l"/"1"/"|", "rn" for "m", "cl" for "d".
_ALTERNATIVES = {"i": ("i", "l", "1", "|"), "l": ("l", "i", "1", "|"), "m": ("m", "rn"), "d": ("d", "cl")}


def _spellings(name: str) -> set[str]:
    letters = [c for c in name if c not in _SKIPPED]
    choices = [_ALTERNATIVES.get(c, (c,)) for c in letters]
    return {"".join(combo) for combo in itertools.product(*choices)}


def _tables() -> tuple[frozenset[str], frozenset[str]]:
    complete: set[str] = set()
    for name in TAG_NAMES:
        for spelling in _spellings(name):
            complete.add(spelling)
            complete.add("/" + spelling)
    prefixes = {word[:k] for word in complete for k in range(1, len(word) + 1)}
    return frozenset(complete), frozenset(prefixes)


_COMPLETE, _PREFIXES = _tables()

# Every character that folds to "<" (checked against all of Unicode by the tests).
BRACKETS = "<\uff1c\ufe64\ufe3f\u226e\u2329" + "".join(ch for ch, target in CONFUSABLES.items() if target == "<")
# What an escape must decode to for its place to be worth reading: a bracket, a delimiter, or an
# introducer of a further escape (double encoding).
INTERESTING = BRACKETS + PUA_OPEN + PUA_CLOSE + "".join(INTRODUCERS)


def _candidate_pattern() -> re.Pattern[str]:
    """Where a forged tag or delimiter could begin, as one regex run at C speed.

    It lets through every place the reader could accept and skips the common harmless ones
    (`&quot;`, `%20`, `\\n`, `<div`), which is what makes ordinary markup and JSON cheap. The
    tests replay random inputs through it and through a pattern that marks every bracket and
    introducer, and require the same hits. Runs of `&amp;`, `%25` and backslashes are matched
    whole, so a long run is read once rather than from each of its characters.
    """
    points = sorted({ord(ch) for ch in INTERESTING})
    hexes = "|".join(f"{p:x}" for p in points)
    octals = "|".join(f"{p:o}" for p in points if p < 0o400)
    names = sorted(
        {name.rstrip(";") for name, value in html5.items() if "".join(fold(c) for c in value) == "<" or value in INTERESTING},
        key=len,
        reverse=True,
    )
    # Escapes are matched case-insensitively (`&LT;`, `%3c`, `\\U0000003C`); the bracket's
    # look-ahead is not, because Unicode case-insensitive classes also match letters such as the
    # dotless i or the long s, which must stay readers' business.
    entity = r"(?ai:&(?:amp;?)*(?:#|" + "|".join(n for n in names if n.lower() != "amp") + "))"
    # Any percent byte that is ASCII-interesting, or a UTF-8 lead byte (the multi-byte forms).
    ascii_bytes = "|".join(f"{p:02x}" for p in points if p < 0x80)
    percent = r"(?ai:%(?:25)*(?:" + ascii_bytes + r"|[c-f][0-9a-f]))"
    backslash = r"(?ai:\\+(?:u\{0*(?:" + hexes + r")\}|u0*(?:" + hexes + r")|x(?:" + ascii_bytes + r")|0*(?:" + octals + r")))"
    # After a bracket, an ASCII character that can neither be skipped nor begin a name (nor begin
    # an escape) ends the matter at once: `<p>`, `<b`, `<=`, `<3`.
    can_follow = {c for c in map(chr, range(0x80)) if _may_follow_bracket(c)}
    stoppers = "".join(c for c in map(chr, range(0x20, 0x7F)) if c not in can_follow)
    bracket = "[" + re.escape(BRACKETS) + "](?![" + re.escape(stoppers) + "])"
    others = "[" + re.escape("".join(c for c in INTERESTING if c not in BRACKETS and c not in "&%\\")) + "]"
    # The leading class lets the regex engine skip ahead to possible first characters quickly.
    first = "[" + re.escape("".join(sorted(set(INTERESTING)))) + "]"
    return re.compile(f"(?={first})(?:" + "|".join((bracket, entity, percent, backslash, others)) + ")")


def _may_follow_bracket(ch: str) -> bool:
    if ch in INTRODUCERS:
        return True
    folded = fold(ch)
    return folded == "" or all(c in _SKIPPED for c in folded) or any(p.startswith(folded) for p in _PREFIXES)


CANDIDATE = _candidate_pattern()


@dataclass(frozen=True, slots=True)
class Hit:
    """A span of the original text to replace: a forged tag's bracket, or a delimiter."""

    start: int
    end: int
    kind: str  # "tag" or "delimiter"
    folded: str  # "<" for a tag, the delimiter character for a delimiter


# Folded forms of the plain ASCII characters, read without the general unit reader (the hot path
# for ordinary markup such as `<div`); escape introducers are left out so they still decode.
_ASCII_FOLD = {chr(c): fold(chr(c)) for c in range(0x80) if chr(c) not in INTRODUCERS}
_BRACKET_SET = frozenset(BRACKETS)


def _reads_as_tag_name(text: str, pos: int) -> bool:
    """True when the text from `pos` (just after a bracket) reads as one of the tag names."""
    seen = ""
    n = len(text)
    plain = _ASCII_FOLD
    while pos < n:
        folded = plain.get(text[pos])
        if folded is None:
            folded, pos = unit(text, pos)
        else:
            pos += 1
        for ch in folded:
            if ch in _SKIPPED:
                continue
            seen += ch
            if seen in _COMPLETE:
                return True
            if seen not in _PREFIXES:
                return False
    return False


def scan(text: str, candidates: re.Pattern[str] = CANDIDATE) -> list[Hit]:
    """All forged markup in `text`, in order. `candidates` is replaceable for the tests only."""
    hits: list[Hit] = []
    resume = 0
    for match in candidates.finditer(text):
        start = match.start()
        if start < resume:
            continue  # inside an escape already read as one unit
        if text[start] in _BRACKET_SET:
            folded, end = "<", start + 1
        else:
            folded, end = unit(text, start)
        resume = end
        if folded == "<":
            if _reads_as_tag_name(text, end):
                hits.append(Hit(start, end, "tag", folded))
        elif folded in (PUA_OPEN, PUA_CLOSE):
            hits.append(Hit(start, end, "delimiter", folded))
    return hits
