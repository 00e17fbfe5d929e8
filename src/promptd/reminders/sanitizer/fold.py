"""Character folding for detection: what a character looks like, reduced to plain ASCII.

Domain layer: imports only the standard library and its sibling modules; must not import
promptd.rpc or promptd.methods.

Detection never edits text with these results; it compares the folded view with the folded names
of the reminder tags. Folding is deliberately generous (a false positive costs one visible rename,
a false negative lets a forged tag through):
- compatibility forms collapse through NFKD (fullwidth, small forms, ligatures, mathematical and
  circled letters, superscripts);
- every character maps to its Unicode TR39 prototype (confusables.py, generated from Unicode's
  confusables.txt), before and after case folding, so look-alikes from any script read as the
  letter they imitate (the skeleton of UTS #39, made case-insensitive);
- a letter TR39 does not list reads as the letter it is built on (letters.py, generated from
  Unicode's character names: a letter with a hook, stroke, curl or tail, a modifier letter);
- combining marks are dropped, so accents cannot hide a letter;
- invisible characters fold to nothing and every kind of whitespace to one space.
Both sides go through the same fold, so TR39's own choices (its prototype of "m" is "rn", of "d"
is "cl") apply to the tag names as well.

`fold_all` adds the other readings a character has: its prototype taken before case folding, its
TR39 prototype as written (so every TR39 entry reads as its prototype), the letter it is built on
where TR39 maps it elsewhere, and the letter a spacing mark passes for (the ogonek as "i").
"""

from __future__ import annotations

import unicodedata

from promptd.reminders.sanitizer.confusables import PROTOTYPES
from promptd.reminders.sanitizer.letters import BASES, MARK_LETTERS

# Characters that render as nothing (or as blank space) but are not whitespace to str.isspace():
# Hangul fillers, the Mongolian vowel separator, Braille blank, combining grapheme joiner,
# variation selectors. Categories Cf (format: zero-width, bidi controls, tags), Mn and Me are
# handled by category.
_INVISIBLE_EXTRA = frozenset("\u115f\u1160\u3164\uffa0\u180e\u2800\u034f" + "".join(chr(c) for c in range(0xFE00, 0xFE10)))

# Angle brackets that TR39 does not map to "<" but that read as one in a tag: the CJK and
# mathematical left angle brackets (single, double, with a dot), the angle bracket ornaments
# (medium, heavy), the vertical presentation forms, and the double angle quotation marks and
# "much less-than", which read as "<<". Stricter than TR39 on purpose; the rest of the folding is
# TR39's. Only the characters themselves: one whose TR39 prototype is such a bracket (the kana
# "く" is) stays itself, or common Japanese text would be full of tag starts.
EXTRA_BRACKETS = frozenset("\u3008\u27e8\u29fc\u276c\u2329\u226e\u2770\u27ea\u300a\u2991\ufe3d\ufe3f\u226a\u00ab")

_cache: dict[str, str] = {}
_alternatives_cache: dict[str, tuple[str, ...]] = {}


def is_invisible(ch: str) -> bool:
    if ch in _INVISIBLE_EXTRA:
        return True
    category = unicodedata.category(ch)
    if category in ("Cf", "Mn", "Me"):
        return True
    # C0/C1 controls other than whitespace: a NUL between "<" and a name still reads as a tag.
    return category == "Cc" and not ch.isspace()


# Letters TR39 maps to another non-ASCII look-alike (Cyrillic "т" to the small capital "ᴛ", "к"
# to "ĸ", Greek "ε" to "ꞓ") that a reader of a word still takes for the Latin letter. Applied after
# TR39; small capitals and dashes are handled by rule in `_supplement`.
_READS_AS = {
    "\u03b5": "e",
    "\u03ba": "k",
    "\u043a": "k",
    "\u0138": "k",
    "\u043c": "m",
    "\u03bc": "m",
    "\u028d": "m",
    "\u043f": "n",
    "\u03c0": "n",
    "\u0442": "t",
    "\u03c4": "t",
    "\ua793": "e",
    "\u1971": "e",
    "\u30fc": "-",
    # Middle dots and bullets read as the dot separator; the replacement character as nothing.
    "\u00b7": ".",
    "\u2022": ".",
    "\u30fb": ".",
    "\u2027": ".",
    "\u2219": ".",
    "\u22c5": ".",
    "\uff65": ".",
    "\ufffd": "",
}


def _supplement(ch: str) -> str:
    if ch in _READS_AS:
        return _READS_AS[ch]
    if unicodedata.category(ch) == "Pd":
        return "-"  # every dash reads as a hyphen in a tag name; TR39 maps some to other marks
    name = unicodedata.name(ch, "")
    if name.startswith("LATIN LETTER SMALL CAPITAL ") and len(name) == len("LATIN LETTER SMALL CAPITAL ") + 1:
        return name[-1].lower()
    base = BASES.get(ch)
    if base is not None:
        # A letter TR39 leaves as itself (ʈ, ɾ, ȿ, ᶒ) reads as the one it is built on, folded the
        # same way (a base is never itself in BASES, so this goes one level deep).
        return fold(base)
    return ch


def _prototypes(text: str) -> str:
    """Each character replaced by its TR39 prototype, decomposed, without marks or invisibles."""
    out = []
    for part in unicodedata.normalize("NFKD", "".join(PROTOTYPES.get(c, c) for c in text)):
        if is_invisible(part):
            continue
        out.append(" " if part.isspace() else _supplement(part))
    return "".join(out)


def _fixed(ch: str) -> str | None:
    """The fold of characters that need no table: invisibles, whitespace, brackets, dashes."""
    if is_invisible(ch):
        return ""
    if "\ud800" <= ch <= "\udfff":
        # A lone surrogate (JSON may carry one) is no letter; it reads as the replacement
        # character it becomes for most readers (Go, TextDecoder, a model's API), so as nothing.
        return ""
    if ch.isspace():
        return " "
    if ch in EXTRA_BRACKETS:
        return "<"
    if unicodedata.category(ch) == "Pd":
        return "-"
    return None


def _compute(ch: str) -> str:
    fixed = _fixed(ch)
    if fixed is not None:
        return fixed
    # Case folding first (the long s reads as "s", not as TR39's "f"), then the prototypes of the
    # folded text, decomposed; the prototype of a prototype is itself, so one more pass settles
    # what decomposition revealed.
    once = _prototypes(unicodedata.normalize("NFKD", ch).casefold())
    return _prototypes(once).casefold()


def _compute_prototype_first(ch: str) -> str:
    fixed = _fixed(ch)
    if fixed is not None:
        return fixed
    # The prototype of the character as written: a capital's own prototype can be a letter its
    # small form does not look like (Greek capital upsilon reads "Y"; its small form "υ" reads "u").
    once = _prototypes(unicodedata.normalize("NFKD", ch))
    return _prototypes(once.casefold()).casefold()


def _is_letters(text: str) -> bool:
    return text.isascii() and text.isalpha()


def _readings(ch: str) -> tuple[str, ...]:
    readings = [fold(ch), _compute_prototype_first(ch)]
    prototype = PROTOTYPES.get(ch)
    if prototype is not None:
        # TR39's prototype as written, where it is letters: case folding or NFKD can lead elsewhere
        # (the long s folds to "s", TR39 reads it "f"; the lunate sigma folds through "σ" to "o",
        # TR39 reads it "c"). Only letters: a tag name is made of them, and a prototype that is
        # a bracket ornament (TR39's for the kana "く") must not make common text a tag start.
        spelled = "".join(fold(c) for c in prototype)
        if _is_letters(spelled):
            readings.append(spelled)
    base = BASES.get(ch)
    if base is not None and _is_letters(fold(base)):
        readings.append(fold(base))  # where TR39 maps the letter to something else
    if ch in MARK_LETTERS:
        readings.append(MARK_LETTERS[ch])
    return tuple(dict.fromkeys(readings))


def fold_all(ch: str) -> tuple[str, ...]:
    """Every way `ch` may read: `fold(ch)` first, then the others, each once (see the module
    docstring). A reader accepts a name if any choice of readings spells it."""
    found = _alternatives_cache.get(ch)
    if found is None:
        found = _readings(ch)
        # Bounded by the number of distinct characters ever seen, like _cache.
        _alternatives_cache[ch] = found
    return found


def fold(ch: str) -> str:
    """The folded form of one character: "" for invisibles, " " for whitespace, else one or more
    lowercase characters (ASCII for everything the tables know)."""
    folded = _cache.get(ch)
    if folded is None:
        folded = _compute(ch)
        # Bounded by the number of distinct characters ever seen (at most all of Unicode).
        _cache[ch] = folded
    return folded
