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
from promptd.reminders.sanitizer.confusables import PROTOTYPES
from promptd.reminders.sanitizer.escapes import INTRODUCERS, decode, unit, unit_readings
from promptd.reminders.sanitizer.fold import fold, fold_all
from promptd.text import has_astral, non_ascii

PUA_OPEN = markup.PUA_OPEN
PUA_CLOSE = markup.PUA_CLOSE
TAG_NAMES = markup.TAG_NAMES

# Characters the reader passes over between "<", "/" and the letters of a name: folded
# whitespace, the word separators people use in tag names, Markdown's emphasis and strikethrough
# markers (CommonMark and GFM: a renderer shows `<sys**tem**-reminder>` and `<sys~~tem~~-reminder>`
# as the tag name; "_" is both), and invisibles (which fold to "").
_SKIPPED = frozenset(" -_.:*~")
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

# Spellings beyond the fold: TR39's prototype of the capital "I" is "l", which case folding hides,
# so in a tag name "i" and "l" stand for each other; and "cl" reads as "d" in most fonts (as "rn"
# reads as "m", which TR39 itself has).
_ALSO = {"i": ("l",), "l": ("i",), "d": ("cl",)}


def _spellings(name: str) -> set[str]:
    """Every folded spelling of `name`, without separators."""
    choices = [{fold(c), *_ALSO.get(c, ())} for c in name if c not in _SKIPPED]
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


_RULE_BRACKETS = "\u3008\u27e8\u29fc\u276c\u2329\u226e"


def _table_brackets() -> set[str]:
    """The characters of the confusables table that may read as "<": `{ch for ch in PROTOTYPES if
    "<" in fold_all(ch)}` (a test checks they are the same). Folding all 6,700 entries was most of
    the first sanitize call's time; this follows the table backwards from "<" instead (a character
    whose prototype, decomposition or case fold holds one that may read as "<"), then folds only
    those found."""

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
    # The angle brackets the fold reads as "<" by rule (fold._EXTRA_BRACKETS), and "<" itself.
    reached = {"<", *_RULE_BRACKETS}
    while True:
        found = {ch for ch, led in leads.items() if ch not in reached and not led.isdisjoint(reached)}
        if not found:
            break
        reached |= found
    return {ch for ch in reached if ch in PROTOTYPES and "<" in fold_all(ch)}


# _table_brackets() of this confusables table, by the Unicode data version that folded it: computing
# it was most of this module's import, so a process on a known version skips it. The tests check the
# entry for the running version against the computation (regenerating confusables.py must update it).
KNOWN_TABLE_BRACKETS = {
    "14.0.0": "\u02c2\u1438\u16b2\u2039\u276e\u27e8\u2d66\u3008\ufe64\uff1c\U0001032d\U00016aec\U0001d236",
}


def table_brackets() -> set[str]:
    known = KNOWN_TABLE_BRACKETS.get(unicodedata.unidata_version)
    return set(known) if known is not None else _table_brackets()


# Every character that folds to "<" (checked against all of Unicode by the tests).
BRACKETS = "".join(sorted({"<", "\uff1c", "\ufe64", "\ufe3f", *table_brackets(), *_RULE_BRACKETS}))
# What an escape must decode to for its place to be worth reading: a bracket, a delimiter, or an
# introducer of a further escape (double encoding).
INTERESTING = BRACKETS + PUA_OPEN + PUA_CLOSE + "".join(INTRODUCERS)


# Non-ASCII characters the bracket's look-ahead judges itself instead of handing them to the
# reader: invisibles and spaces (which the reader passes over) and the look-alike letters an
# attacker packs densely (Latin-1, Greek, Cyrillic, fullwidth forms). Anything else non-ASCII is
# left to the reader.
_JUDGED_RANGES = ((0x80, 0x100), (0x370, 0x400), (0x400, 0x460), (0x2000, 0x2070), (0xFE00, 0xFE10), (0xFF01, 0xFF5F))
_JUDGED_EXTRA = "\u034f\u115f\u1160\u180e\u3000\u3164\ufeff\uffa0"


def _judged() -> tuple[str, str]:
    """Of the judged characters: those every reading of which the reader passes over, and those
    every reading of which is one character that is neither passed over nor "<" (a letter, or a
    character that ends a name). A character with a longer reading, with readings that disagree,
    or an escape introducer is left to the reader."""
    skipped: list[str] = []
    single: list[str] = []
    for ch in (chr(c) for low, high in _JUDGED_RANGES for c in range(low, high)):
        if ch in INTRODUCERS:
            continue
        readings = fold_all(ch)
        passed = [not r or all(c in _SKIPPED for c in r) for r in readings]
        if all(passed):
            skipped.append(ch)
        elif not any(passed) and all(len(r) == 1 and r != "<" for r in readings):
            single.append(ch)
    return "".join(skipped + [c for c in _JUDGED_EXTRA if all(not r or all(x in _SKIPPED for x in r) for r in fold_all(c))]), "".join(single)


# _judged() by the Unicode data version that folded it (computing it costs a few milliseconds at
# every start); the tests check the entry for the running version against the computation.
KNOWN_JUDGED: dict[str, tuple[str, str]] = {
    "14.0.0": (
        "\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\xa0\xa8\xad\xaf\xb4\xb7\u0384\u0385\u0387\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u200b\u200c\u200d\u200e\u200f\u2010\u2011\u2012\u2013\u2014\u2015\u2017\u2022\u2024\u2025\u2026\u2027\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u202f\u203e\u2043\u204e\u2053\u205a\u205f\u2060\u2061\u2062\u2063\u2064\u2066\u2067\u2068\u2069\u206a\u206b\u206c\u206d\u206e\u206f\ufe00\ufe01\ufe02\ufe03\ufe04\ufe05\ufe06\ufe07\ufe08\ufe09\ufe0a\ufe0b\ufe0c\ufe0d\ufe0e\ufe0f\uff0a\uff0d\uff0e\uff1a\uff3f\uff5e\u034f\u115f\u1160\u180e\u3000\u3164\ufeff\uffa0",
        "\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa9\xaa\xab\xac\xae\xb0\xb1\xb2\xb3\xb6\xb9\xba\xbb\xbf\xc0\xc1\xc2\xc3\xc4\xc5\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xe0\xe1\xe2\xe3\xe4\xe5\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff\u0370\u0371\u0372\u0373\u0374\u0375\u0376\u0377\u0378\u0379\u037b\u037c\u037d\u037e\u037f\u0380\u0381\u0382\u0383\u0386\u0388\u0389\u038a\u038b\u038c\u038d\u038e\u038f\u0390\u0391\u0393\u0394\u0395\u0396\u0397\u0398\u0399\u039a\u039b\u039d\u039e\u039f\u03a0\u03a1\u03a2\u03a3\u03a4\u03a5\u03a6\u03a7\u03a8\u03a9\u03aa\u03ab\u03ac\u03ad\u03ae\u03af\u03b0\u03b1\u03b3\u03b4\u03b5\u03b6\u03b7\u03b8\u03b9\u03ba\u03bb\u03bd\u03be\u03bf\u03c0\u03c1\u03c2\u03c3\u03c4\u03c5\u03c6\u03c7\u03c8\u03c9\u03ca\u03cb\u03cc\u03cd\u03ce\u03cf\u03d1\u03d2\u03d3\u03d4\u03d5\u03d6\u03d7\u03d8\u03d9\u03da\u03db\u03dc\u03dd\u03de\u03df\u03e0\u03e1\u03e2\u03e3\u03e4\u03e5\u03e6\u03e7\u03e8\u03e9\u03ea\u03eb\u03ec\u03ed\u03ee\u03ef\u03f0\u03f1\u03f2\u03f3\u03f4\u03f5\u03f6\u03f7\u03f8\u03f9\u03fb\u03fc\u03fd\u03fe\u03ff\u0400\u0401\u0402\u0403\u0404\u0405\u0406\u0407\u0408\u0409\u040a\u040b\u040c\u040d\u040e\u040f\u0410\u0411\u0412\u0413\u0414\u0415\u0416\u0417\u0418\u0419\u041a\u041b\u041d\u041e\u041f\u0420\u0421\u0422\u0423\u0424\u0425\u0426\u0427\u0428\u0429\u042c\u042d\u042f\u0430\u0431\u0432\u0433\u0434\u0435\u0436\u0437\u0438\u0439\u043a\u043b\u043d\u043e\u043f\u0440\u0441\u0442\u0443\u0444\u0445\u0446\u0447\u0448\u0449\u044c\u044d\u044e\u044f\u0450\u0451\u0452\u0453\u0454\u0455\u0456\u0457\u0458\u0459\u045a\u045b\u045c\u045d\u045e\u045f\u2018\u2019\u201a\u201b\u201e\u2020\u2021\u2023\u2032\u2035\u2038\u203a\u203b\u203d\u203f\u2040\u2041\u2042\u2044\u2045\u2046\u204a\u204b\u204c\u204d\u204f\u2050\u2051\u2054\u2055\u2056\u2058\u2059\u205b\u205c\u205d\u205e\u2065\uff01\uff03\uff04\uff07\uff08\uff09\uff0b\uff0c\uff0f\uff10\uff11\uff12\uff13\uff14\uff15\uff16\uff17\uff18\uff19\uff1b\uff1d\uff1e\uff1f\uff20\uff21\uff22\uff23\uff24\uff25\uff26\uff27\uff28\uff29\uff2a\uff2b\uff2c\uff2e\uff2f\uff30\uff31\uff32\uff33\uff34\uff35\uff36\uff37\uff38\uff39\uff3a\uff3b\uff3d\uff3e\uff40\uff41\uff42\uff43\uff44\uff45\uff46\uff47\uff48\uff49\uff4a\uff4b\uff4c\uff4e\uff4f\uff50\uff51\uff52\uff53\uff54\uff55\uff56\uff57\uff58\uff59\uff5a\uff5b\uff5c\uff5d",
    ),
}


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
    skipped, single = KNOWN_JUDGED.get(unicodedata.unidata_version) or _judged()
    alphabet = set("".join(word for word in _COMPLETE))
    letters = [chr(code) for code, folded in _ASCII_TABLE.items() if folded is not None and chr(code) != "<" and all(c in alphabet for c in folded)]
    letters += [ch for ch in single if not alphabet.isdisjoint(fold_all(ch))]
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


def _candidate_patterns() -> tuple[list[tuple[str, re.Pattern[str]]], str]:
    """Where a forged tag or delimiter could begin: one regex per ASCII introducer or bracket,
    each beginning with its literal character so the regex engine skips ahead at memchr speed,
    and the non-ASCII characters that can begin one.

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
        key=len,
        reverse=True,
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
    other_hexes = _trie([f"{p:x}" for p in points if p != 0x3C])
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
    # Each with its first character (the backslash pattern's is the escaped "\\"), which must be in
    # a text for the pattern to match there.
    ascii_patterns = [(p[0], re.compile(p)) for p in (bracket, entity, percent, backslash)]
    others = "".join(c for c in sorted(set(INTERESTING)) if not c.isascii())
    return ascii_patterns, others


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
_ASCII_TABLE: dict[int, str | None] = {ord(c): (None if not f or all(x in _SKIPPED for x in f) else f) for c, f in _ASCII_FOLD.items()}
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
        letter = folded not in ("", "/") and not all(c in _SKIPPED for c in folded)
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
        if c in _SKIPPED:
            continue
        seen += c
        if seen in _COMPLETE:
            return _COMPLETED
        if seen not in _PREFIXES:
            return None
    return seen


_ASCII_CANDIDATES, _OTHER_STARTS = _candidate_patterns()
_OTHER_BMP_STARTS = "".join(c for c in _OTHER_STARTS if ord(c) <= 0xFFFF)


@functools.cache
def _other_start(ch: str) -> re.Pattern[str]:
    """The pattern for a non-ASCII start: a bracket with the ASCII bracket's look-ahead, anything
    else as it is. Compiled when a text first holds the character."""
    return re.compile(re.escape(ch) + ("(?=" + _name_pattern() + ")" if ch in _BRACKET_SET else ""))


def _candidate_starts(text: str, others: str | None) -> list[int]:
    """Where `_candidate_patterns`' patterns match in `text`, in order. Each pattern begins with a
    literal, so the regex engine skips to the next one at memchr speed; a pattern whose first
    character is absent is not run at all, and each non-ASCII start present is searched as a
    literal of its own (a character class is read one character at a time, ten times slower).
    `others` is `text`'s non-ASCII characters (promptd.text.non_ascii), when the caller has them."""
    found = [[match.start() for match in pattern.finditer(text)] for first, pattern in _ASCII_CANDIDATES if first in text]
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
