"""Unicode tag characters: which runs are smuggled text and which belong to an emoji flag.

Domain layer: imports only the standard library and promptd.text; must not import promptd.rpc or promptd.methods.

Tag characters (U+E0000-U+E007F) mirror ASCII, are invisible to a person and readable to a model
("ASCII smuggling"), so the sanitizer removes them. Their one use in ordinary text is the emoji tag
sequence: U+1F3F4 WAVING BLACK FLAG, tag letters spelling a subdivision code, U+E007F CANCEL TAG.
Only the sequences Unicode recommends for general interchange (RGI) are drawn as a flag; those are
kept whole, and every other run is removed: a flag-looking sequence of another code, a run without
U+1F3F4 before it, or one spelling markup after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from promptd.text import has_astral

BLACK_FLAG = "\U0001f3f4"
CANCEL_TAG = "\U000e007f"
TAG_RUN = re.compile("[\U000e0000-\U000e007f]+")


def _tag_spelling(code: str) -> str:
    """A subdivision code in tag letters, with the cancel tag that ends the sequence."""
    return "".join(chr(0xE0000 + ord(c)) for c in code) + CANCEL_TAG


# RGI_Emoji_Tag_Sequence in Unicode's emoji-sequences.txt: England, Scotland, Wales, the same three
# since Emoji 5.0 (2017). tests/reminders/test_sanitize_emoji_tags.py holds this set equal to the fully
# qualified tag sequences of the `emoji` package (built from Unicode's emoji-test.txt).
RGI_FLAG_SUBDIVISIONS = ("gbeng", "gbsct", "gbwls")
RGI_FLAG_TAGS = frozenset(_tag_spelling(code) for code in RGI_FLAG_SUBDIVISIONS)


def may_hold_smuggled_runs(text: str, others: str) -> bool:
    """Whether `text`, whose non-ASCII characters are `others` (promptd.text.non_ascii), may hold
    a run `smuggled_runs` yields. Counted instead of searched (a character class over wide text is
    read one character at a time): when every tag character lies in one of the RGI flags, each
    written whole after U+1F3F4, no run is smuggled. Such occurrences cannot overlap (U+1F3F4 is
    no tag character), and a run longer than its flag holds a tag character outside it."""
    if not has_astral(others):
        return False
    tagged = sum(map(len, TAG_RUN.findall(others)))
    return tagged > 0 and tagged != sum(text.count(BLACK_FLAG + flag) * len(flag) for flag in RGI_FLAG_TAGS)


def smuggled_runs(text: str) -> Iterator[re.Match[str]]:
    """The runs of tag characters in `text` that the sanitizer removes: all but those that, with
    the U+1F3F4 right before them, make an RGI emoji tag sequence."""
    for run in TAG_RUN.finditer(text):
        start = run.start()
        if start and text[start - 1] == BLACK_FLAG and run.group() in RGI_FLAG_TAGS:
            continue
        yield run


def without_smuggled_runs(text: str) -> tuple[str, int]:
    """`text` with its smuggled runs removed, and how many there were."""
    pieces = []
    last = 0
    count = 0
    for run in smuggled_runs(text):
        pieces.append(text[last : run.start()])
        last = run.end()
        count += 1
    if not count:
        return text, 0
    pieces.append(text[last:])
    return "".join(pieces), count
