"""Character folding for detection: what a character looks like, reduced to plain ASCII.

Domain layer: imports only the standard library; must not import promptd.rpc or promptd.methods.

Detection never edits text with these results; it compares the folded view with the names of the
reminder tags. Folding is deliberately generous (a false positive costs one visible escape, a false
negative lets a forged tag through):
- compatibility forms collapse through NFKD (fullwidth, small forms, ligatures, mathematical and
  circled letters, superscripts);
- combining marks are dropped, so accents cannot hide a letter;
- letters and symbols from other scripts that look like the ASCII ones in the tag names map to them
  (the table below);
- invisible characters fold to nothing and every kind of whitespace to one space.
"""

from __future__ import annotations

import unicodedata

# The opening escape the sanitizer writes in place of a forged tag's bracket. It must never fold
# to "<", or a sanitized text would be detected again and sanitizing would not be idempotent.
NEUTRAL_BRACKET = "\u2039"

# Characters that render as nothing (or as blank space) but are not whitespace to str.isspace():
# Hangul fillers, the Mongolian vowel separator, Braille blank, combining grapheme joiner,
# variation selectors. Categories Cf (format: zero-width, bidi controls, tags), Mn and Me are
# handled by category.
_INVISIBLE_EXTRA = frozenset(
    "\u115f\u1160\u3164\uffa0\u180e\u2800\u034f"
    + "".join(chr(c) for c in range(0xFE00, 0xFE10))
)

# Look-alikes of the ASCII characters that matter for detection, keyed by their casefolded form.
# Sources: the Cyrillic, Greek, Armenian, Cherokee and Latin small-capital letters that are
# commonly used as homoglyphs. NFKD already handles fullwidth, mathematical and enclosed forms.
_CONFUSABLE_GROUPS = {
    "<": "\u02c2\u1438\u16b2\u276e\u3008\u27e8\u29fc",
    "/": "\u2044\u2215\u29f8\u2571\u3033",
    "-": "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u02d7\u06d4\u2043\u2e3a\u2e3b\u30fc\u2796",
    "_": "\u2017",
    "a": "\u0430\u03b1\u0251\u237a\u1d00\u13aa",
    "c": "\u0441\u03f2\u1d04",
    "d": "\u0501\u146f\u13a0\u1d05",
    "e": "\u0435\u04bd\u212e\u03b5\u1d07\u13ac\u1971",
    "g": "\u0261\u0581\u1d83\u0262\u13c0",
    "i": "\u0456\u0131\u0269\u03b9\u04cf\u026a\u13a5\u2373",
    "j": "\u0458\u03f3\u1d0a",
    "k": "\u03ba\u043a\u1d0b",
    "l": "\u01c0\u05c0\u07ca\u2d4f\u16c1\ua4f2\u0627\u029f\u13de",
    "m": "\u043c\u03bc\u1d0d\u13b7",
    "n": "\u0578\u03b7\u043f\u03bd\u0274",
    "p": "\u0440\u03c1\u2374\u1d18\u13e2",
    "r": "\u0433\u1d26\u0280\uab47\u13d2",
    "s": "\u0455\ua731\uabaa\u13da",
    "t": "\u0442\u03c4\u1d1b\u13a2",
    "y": "\u0443\u03b3\u04af\u028f\u03c5",
}
CONFUSABLES: dict[str, str] = {ch: target for target, group in _CONFUSABLE_GROUPS.items() for ch in group}

_cache: dict[str, str] = {}


def is_invisible(ch: str) -> bool:
    if ch in _INVISIBLE_EXTRA:
        return True
    category = unicodedata.category(ch)
    if category in ("Cf", "Mn", "Me"):
        return True
    # C0/C1 controls other than whitespace: a NUL between "<" and a name still reads as a tag.
    return category == "Cc" and not ch.isspace()


def _compute(ch: str) -> str:
    if is_invisible(ch):
        return ""
    if ch.isspace():
        return " "
    out = []
    for part in unicodedata.normalize("NFKD", ch):
        if is_invisible(part):
            continue
        if part.isspace():
            out.append(" ")
            continue
        for folded in part.casefold():
            out.append(CONFUSABLES.get(folded, folded))
    return "".join(out)


def fold(ch: str) -> str:
    """The folded form of one character: "" for invisibles, " " for whitespace, else one or more
    lowercase characters (ASCII for everything the tables know)."""
    folded = _cache.get(ch)
    if folded is None:
        folded = _compute(ch)
        # Bounded by the number of distinct characters ever seen (at most all of Unicode).
        _cache[ch] = folded
    return folded
