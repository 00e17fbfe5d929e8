"""Plain text from model output: `[n]` references with a Sources list (export), or no markers at
all (strip).

Domain layer: imports nothing from promptd.rpc or promptd.methods. Both read the text as complete
(a final parse): an unfinished marker at the end is ordinary text. Afterwards no citation
private-use character (U+E200-U+E202) and no U+FFFC is left, so nothing invisible travels into a
clipboard or a log. Reminder delimiters U+E203/U+E204 belong to reminders and are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple

from promptd.citations.kinds import MarkerForm, SegmentType
from promptd.citations.markers import Segment, parse
from promptd.citations.sources import describe
from promptd.text import separate_halves

_INVISIBLE = re.compile("[\ue200-\ue202\ufffc]")
_WHITESPACE_RUN = re.compile(r"\s+")
# After a removed marker, these make the blanks before it redundant: "see docs [[cite:a]]." reads
# "see docs." rather than "see docs .".
_CLOSING_PUNCTUATION = frozenset(".,;:!?)]}\u00bb\u201d\u2019\u3001\u3002\uff0c\uff0e")
SOURCES_HEADING = "Sources:"


class Source(NamedTuple):
    url: str | None = None
    title: str | None = None


class Reference(NamedTuple):
    number: int
    ids: tuple[str, ...]
    title: str
    url: str | None


class Exported(NamedTuple):
    text: str
    references: list[Reference]


class Stripped(NamedTuple):
    text: str
    removed: int


def strip(text: str) -> Stripped:
    """`text` without citation markers, nor pua / object markers of other types (invisible
    control text). ascii markers of other types (`[[note:x]]`) are visible text the model wrote and
    stay, like wiki links would."""
    out: list[str] = []
    removed = 0
    for segment in parse(text, final=True).segments:
        if _keeps(segment):
            out.append(_INVISIBLE.sub("", segment.text))
        else:
            _drop_blanks_before(out, text, segment.end)
            removed += 1
    # Cutting markers out must not bring two halves of a character together.
    return Stripped(separate_halves("".join(out)), removed)


def export(text: str, sources: Mapping[str, Source]) -> Exported:
    """Citations become `[n]`, numbered by first appearance; a source keeps its number however
    often it is cited, and ids that point at the same URL share one number. A `Sources:` list
    follows the text when anything was cited."""
    out: list[str] = []
    numbers: dict[str, int] = {}  # source identity -> number
    references: list[Reference] = []
    for segment in parse(text, final=True).segments:
        if segment.type is SegmentType.CITATION:
            cited: list[int] = []
            for ident in segment.ids:
                number = _number_for(ident, sources.get(ident), numbers, references)
                if number not in cited:
                    cited.append(number)
            out.append("[" + ", ".join(str(n) for n in cited) + "]")
        elif _keeps(segment):
            out.append(_INVISIBLE.sub("", segment.text))
        else:
            _drop_blanks_before(out, text, segment.end)
    body = "".join(out)
    if not references:
        return Exported(body, [])
    listing = "\n".join([SOURCES_HEADING, *(_reference_line(r) for r in references)])
    body = body.rstrip()
    return Exported(f"{body}\n\n{listing}" if body else listing, references)


def _keeps(segment: Segment) -> bool:
    if segment.type is SegmentType.TEXT:
        return True
    return segment.type is SegmentType.MARKER and segment.form is MarkerForm.ASCII


def _drop_blanks_before(out: list[str], text: str, end: int) -> None:
    following = text[end] if end < len(text) else ""
    if following and not following.isspace() and following not in _CLOSING_PUNCTUATION:
        return
    while out:
        trimmed = out[-1].rstrip(" \t")
        if trimmed:
            out[-1] = trimmed
            return
        out.pop()


def _number_for(ident: str, source: Source | None, numbers: dict[str, int], references: list[Reference]) -> int:
    url = _clean(source.url) if source and source.url else None
    identity = f"url:{url}" if url else f"id:{ident}"
    number = numbers.get(identity)
    if number is None:
        number = len(references) + 1
        numbers[identity] = number
        references.append(Reference(number, (ident,), _title(ident, source, url), url))
    else:
        reference = references[number - 1]
        if ident not in reference.ids:
            references[number - 1] = Reference(number, (*reference.ids, ident), reference.title, reference.url)
    return number


def _title(ident: str, source: Source | None, url: str | None) -> str:
    """The source's own title, else what citation/describe would label it, else its id."""
    if source and source.title and _clean(source.title):
        return _clean(source.title)
    if url:
        label = describe(url).label
        if label:
            return label
    return ident


def _clean(value: str) -> str:
    # One line each: a title with line breaks would break the Sources list apart.
    return _WHITESPACE_RUN.sub(" ", _INVISIBLE.sub("", value)).strip()


def _reference_line(reference: Reference) -> str:
    # Angle brackets delimit a URL in plain text (RFC 3986, appendix C), so trailing punctuation
    # in a title or URL is never read as part of the other.
    if reference.url:
        return f"[{reference.number}] {reference.title} <{reference.url}>"
    return f"[{reference.number}] {reference.title}"
