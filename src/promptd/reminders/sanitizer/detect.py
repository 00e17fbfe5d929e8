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

from promptd.reminders.sanitizer.escapes import INTRODUCERS, unit
from promptd.reminders.sanitizer.fold import CONFUSABLES

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

# Every character that folds to "<" (checked against all of Unicode by the tests), the delimiters,
# and the escape introducers. Runs of `&amp;`, `%25` and backslashes are one candidate each, so a
# long run is read once rather than from each of its characters.
_BRACKETS = "<\uff1c\ufe64\u226e" + "".join(ch for ch, target in CONFUSABLES.items() if target == "<") + "\u2329"
_OTHER_INTRODUCERS = "".join(ch for ch in INTRODUCERS if ch not in "&%\\")
CANDIDATE = re.compile(
    r"&(?:amp;)*|%(?:25)*|\\+|[" + re.escape(_BRACKETS + _OTHER_INTRODUCERS) + PUA_OPEN + PUA_CLOSE + "]",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Hit:
    """A span of the original text to replace: a forged tag's bracket, or a delimiter."""

    start: int
    end: int
    kind: str  # "tag" or "delimiter"
    folded: str  # "<" for a tag, the delimiter character for a delimiter


def _reads_as_tag_name(text: str, pos: int) -> bool:
    """True when the text from `pos` (just after a bracket) reads as one of the tag names."""
    seen = ""
    n = len(text)
    while pos < n:
        folded, pos = unit(text, pos)
        for ch in folded:
            if ch in _SKIPPED:
                continue
            seen += ch
            if seen in _COMPLETE:
                return True
            if seen not in _PREFIXES:
                return False
    return False


def scan(text: str) -> tuple[list[Hit], int]:
    """All forged markup in `text`, in order, and how many candidate places were examined."""
    hits: list[Hit] = []
    resume = 0
    examined = 0
    for match in CANDIDATE.finditer(text):
        start = match.start()
        if start < resume:
            continue  # inside an escape already read as one unit
        examined += 1
        folded, end = unit(text, start)
        resume = end
        if folded == "<":
            if _reads_as_tag_name(text, end):
                hits.append(Hit(start, end, "tag", folded))
        elif folded in (PUA_OPEN, PUA_CLOSE):
            hits.append(Hit(start, end, "delimiter", folded))
    return hits, examined
