"""The detector's tables that follow from Unicode's data and the folding rules alone.

Domain layer: imports only the standard library, promptd.reminders.markup and its sibling modules
confusables, escapes and fold; must not import promptd.rpc, promptd.methods, detect or tables (the
generator runs this where tables.py may be stale or absent).

This module is the one definition of each table. Computing them walks the 6,700 confusables
entries and folds some 600 characters, about 20 ms that would fall on every start, so
`make confusables` writes the results into tables.py for the Unicode version of the Python that
ran it; detect.py reads that module when the running Python has the same data, and calls
`compute()` when it has not, which is slower and as correct. A test compares the committed
tables.py with what this module computes now, so a change of a rule here, in fold.py or in
escapes.py, or of a generated table they read, fails until it is regenerated.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterable
from typing import NamedTuple

from promptd.reminders import markup
from promptd.reminders.sanitizer.confusables import PROTOTYPES
from promptd.reminders.sanitizer.escapes import INTRODUCERS
from promptd.reminders.sanitizer.fold import EXTRA_BRACKETS, fold, fold_all

# Characters the reader passes over between "<", "/" and the letters of a name: folded
# whitespace, the word separators people use in tag names, Markdown's emphasis and strikethrough
# markers (CommonMark and GFM: a renderer shows `<sys**tem**-reminder>` and `<sys~~tem~~-reminder>`
# as the tag name; "_" is both), and invisibles (which fold to "").
SKIPPED = frozenset(" -_.:*~")

# Spellings beyond the fold: TR39's prototype of the capital "I" is "l", which case folding hides,
# so in a tag name "i" and "l" stand for each other; and "cl" reads as "d" in most fonts (as "rn"
# reads as "m", which TR39 itself has).
_ALSO = {"i": ("l",), "l": ("i",), "d": ("cl",)}

# The angle brackets the fold reads as "<" by its own rule, beyond TR39.
RULE_BRACKETS = "".join(sorted(EXTRA_BRACKETS))

# Non-ASCII characters the bracket's look-ahead judges itself instead of handing them to the
# reader: invisibles and spaces (which the reader passes over) and the look-alike letters an
# attacker packs densely (Latin-1, Greek and Cyrillic, general punctuation, variation selectors,
# fullwidth forms). Anything else non-ASCII is left to the reader.
JUDGED_RANGES = ((0x80, 0x100), (0x370, 0x460), (0x2000, 0x2070), (0xFE00, 0xFE10), (0xFF01, 0xFF5F))
# Invisibles outside those ranges, judged as well when every reading of them is passed over.
JUDGED_EXTRA = "\u034f\u115f\u1160\u180e\u3000\u3164\ufeff\uffa0"


class Tables(NamedTuple):
    """What tables.py holds, each a string sorted by code point."""

    # The characters of the confusables table that may read as "<" (see `table_brackets`).
    table_brackets: str
    # The judged characters the reader passes over, and those that read as one other character.
    judged_skipped: str
    judged_single: str
    # Of judged_single, those that may read as a letter of a tag name's spellings.
    name_letters: str


def spellings(name: str) -> set[str]:
    """Every folded spelling of `name`, without separators."""
    choices = [{fold(c), *_ALSO.get(c, ())} for c in name if c not in SKIPPED]
    return {"".join(combo) for combo in itertools.product(*choices)}


def names(tag_names: Iterable[str] = markup.TAG_NAMES) -> tuple[frozenset[str], frozenset[str]]:
    """The folded spellings of the tag names, open and closing ("/" first), and every prefix of them."""
    complete: set[str] = set()
    for name in tag_names:
        for spelling in spellings(name):
            complete.add(spelling)
            complete.add("/" + spelling)
    prefixes = {word[:k] for word in complete for k in range(1, len(word) + 1)}
    return frozenset(complete), frozenset(prefixes)


def table_brackets() -> str:
    """The characters of the confusables table that may read as "<": `{ch for ch in PROTOTYPES if
    "<" in fold_all(ch)}` (a test checks they are the same). Folding all 6,700 entries would be
    most of the computation; this follows the table backwards from "<" instead (a character whose
    prototype, decomposition or case fold holds one that may read as "<"), then folds only those
    found."""

    def parts(text: str) -> set[str]:
        folded = text.casefold()
        found = {*text, *folded}
        for form in (text, folded):
            if not unicodedata.is_normalized("NFKD", form):
                decomposed = unicodedata.normalize("NFKD", form)
                found.update(decomposed, decomposed.casefold())
        return found

    # What each entry may turn into: the characters of its prototype and of itself, decomposed and
    # case folded.
    leads = {ch: parts(prototype) | parts(ch) for ch, prototype in PROTOTYPES.items()}
    reached = {"<", *RULE_BRACKETS}
    while True:
        found = {ch for ch, led in leads.items() if ch not in reached and not led.isdisjoint(reached)}
        if not found:
            break
        reached |= found
    return "".join(sorted(ch for ch in reached if ch in PROTOTYPES and "<" in fold_all(ch)))


def _passed_over(ch: str) -> list[bool]:
    """For each reading of `ch`, whether the reader passes over all of it."""
    return [not r or all(c in SKIPPED for c in r) for r in fold_all(ch)]


def judged() -> tuple[str, str]:
    """Of the judged characters: those every reading of which the reader passes over, and those
    every reading of which is one character that is neither passed over nor "<" (a letter, or a
    character that ends a name). A character with a longer reading, with readings that disagree,
    or an escape introducer is left to the reader."""
    skipped: list[str] = []
    single: list[str] = []
    for ch in (chr(c) for low, high in JUDGED_RANGES for c in range(low, high)):
        if ch in INTRODUCERS:
            continue
        passed = _passed_over(ch)
        if all(passed):
            skipped.append(ch)
        elif not any(passed) and all(len(r) == 1 and r != "<" for r in fold_all(ch)):
            single.append(ch)
    skipped += [ch for ch in JUDGED_EXTRA if all(_passed_over(ch))]
    return "".join(sorted(skipped)), "".join(sorted(single))


def name_letters(single: str, complete: Iterable[str]) -> str:
    """The characters of `single` that may read as a letter of one of the `complete` spellings."""
    alphabet = set("".join(complete))
    return "".join(sorted(ch for ch in single if not alphabet.isdisjoint(fold_all(ch))))


def compute() -> Tables:
    """Every table, as the running Python's Unicode data and the committed modules give them."""
    skipped, single = judged()
    complete, _ = names()
    return Tables(table_brackets(), skipped, single, name_letters(single, complete))
