"""The sanitizer: untrusted text in, text that can never pass for a runtime reminder out.

Domain layer: must not import promptd.rpc or promptd.methods.

Every origin (user, tool, model, stored) gets the same full treatment; see docs/security.md. In
order:
1. Unicode tag characters (U+E0000-U+E007F, the "ASCII smuggling" alphabet) are removed, each run
   counted once. They are the one thing removed rather than escaped: they are invisible to a
   person, readable to a model, and carry nothing a reader needs. The exception is an RGI emoji
   tag sequence (the flags of England, Scotland and Wales), kept whole
   (promptd.reminders.sanitizer.tags).
2. Copies of the current process's nonce, in any letter case, become "[nonce]".
3. Forged reminder tags and display-trigger tags are found on a folded, decoded view of the text
   (promptd.reminders.sanitizer.detect) and renamed in the original: RENAME_PREFIX goes in front
   of the tag's name, so `<system-reminder>` reads `<untrusted-system-reminder>`. The bracket and
   the rest stay as written, so a person sees what was attempted and a model reads an element that
   is not a reminder.
4. Reminder delimiters U+E203 / U+E204 (raw or escaped) become the visible text "[U+E203]" /
   "[U+E204]".

Text parts that a host joins into one text (MCP content items, text blocks) are sanitized as one
stream (`sanitize_stream`): a tag split across parts is found on the joined text and renamed
at its name, in the part where the name begins (`"Done. <"` + `"/system-reminder>"` gives
`"/untrusted-system-reminder>"` in the second part: a prefix left after the bracket in the first
would read `<untrusted-/system-reminder>`, which a model may still take for a closing tag). Parts
that must not change (signed content) can be marked: they are read with the stream and what lies
wholly in them is reported, not edited. Structured values: promptd.reminders.values.

None of the replacements can be read as the thing it replaced, nor join with its neighbours into
a new one, so sanitizing twice gives the same text (idempotent) and counts nothing the second time.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable, Sequence
from typing import AnyStr, NamedTuple, cast

from promptd.reminders import markup
from promptd.reminders.kinds import SpanKind
from promptd.reminders.sanitizer.detect import Hit, name_units, scan, tag_name_at
from promptd.reminders.sanitizer.tags import may_hold_smuggled_runs, smuggled_runs, without_smuggled_runs
from promptd.text import GLUED_HALVES, REPLACEMENT_CHARACTER, has_surrogate, non_ascii

DELIMITER_TEXT = {markup.PUA_OPEN: "[U+E203]", markup.PUA_CLOSE: "[U+E204]"}
NONCE_TEXT = "[nonce]"
# Put in front of a forged tag's name. It begins with a letter no tag name begins with, so the
# renamed tag never reads as one again (idempotence), and it ends in "-" so it reads as a prefix.
RENAME_PREFIX = "untrusted-"
# Put before the prefix when every character of a tag that may change lies inside one unit of its
# name (`<sys<b` signed, `x` open, `></b>tem-reminder>` signed): no piece of markup and no escape
# holds a "<", so the unit around it no longer reads as one and the name ends; a space follows
# because "<" followed by a space never begins a tag.
UNIT_BREAK = "< "


class Sanitized(NamedTuple):
    text: str
    neutralized: int


class Span(NamedTuple):
    """Something a sanitizer would change, in the text's code-point offsets (content/inspect)."""

    start: int
    end: int
    kind: SpanKind


class Finding(NamedTuple):
    """One piece of forged markup in a stream of parts: the part it was neutralized in (or, when
    it was left in place, the part where it begins), what it is, and whether it was edited."""

    part: int
    kind: SpanKind
    edited: bool


class Stream(NamedTuple):
    texts: list[str]
    findings: list[Finding]

    @property
    def neutralized(self) -> int:
        return sum(1 for finding in self.findings if finding.edited)


# One edit on the joined text of a stream: replace [start, end) with `text`; `anchor` is where the
# markup begins, and for a rename (an insertion, start == end) `name` where its name begins.
class _Edit(NamedTuple):
    anchor: int
    start: int
    end: int
    text: str
    kind: SpanKind


def sanitize(text: str, nonce: str | None = None) -> Sanitized:
    """Neutralizes forged reminder markup in untrusted `text`; with `nonce`, also copies of it."""
    others = non_ascii(text)
    delimiters = 0
    if markup.PUA_OPEN in others.chars or markup.PUA_CLOSE in others.chars:
        # A raw delimiter is replaced wherever it stands and takes no part in reading anything
        # else (it ends a tag name, as its replacement does), so a plain replace does what the
        # scan would, without a hit per delimiter.
        delimiters = text.count(markup.PUA_OPEN) + text.count(markup.PUA_CLOSE)
        text = text.replace(markup.PUA_OPEN, DELIMITER_TEXT[markup.PUA_OPEN]).replace(markup.PUA_CLOSE, DELIMITER_TEXT[markup.PUA_CLOSE])
        others = non_ascii(text)
    # Most text holds nothing (more) to neutralize: found so with the stream's own checks, in its
    # order, without building a stream.
    if not others.surrogates and not may_hold_smuggled_runs(text, others.chars) and not (nonce and nonce_copies(text, nonce)) and not scan(text, others=others.chars):
        return Sanitized(text, delimiters)
    stream = sanitize_stream([text], nonce)
    return Sanitized(stream.texts[0], delimiters + stream.neutralized)


def remembering(max_chars: int, entries: int) -> Callable[[str, str | None], str]:
    """`sanitize(text, nonce).text` that remembers the last `entries` results for texts of at most
    `max_chars` characters: the result depends only on the text and the nonce, and some texts come
    back turn after turn. Each caller sizes its own cache for the texts it sees."""

    @functools.lru_cache(maxsize=entries)
    def remembered(text: str, nonce: str | None) -> str:
        return sanitize(text, nonce).text

    def sanitized(text: str, nonce: str | None = None) -> str:
        if len(text) <= max_chars:
            return remembered(text, nonce)
        return sanitize(text, nonce).text

    return sanitized


# A static provider's fragment, a context's role instructions: up to 512 small texts (at most
# 4,096 characters each), so the cache stays small.
CACHED_TEXT_CHARS = 4096
sanitize_text = remembering(CACHED_TEXT_CHARS, 512)


def sanitize_parts(parts: Sequence[str], nonce: str | None = None) -> tuple[list[str], int]:
    """`sanitize_stream` without the findings: (parts, count)."""
    stream = sanitize_stream(parts, nonce)
    return stream.texts, stream.neutralized


def sanitize_stream(parts: Sequence[str], nonce: str | None = None, locked: Sequence[bool] | None = None) -> Stream:
    """Sanitizes consecutive text parts that a reader may join, as one stream: the parts (as many
    as given, each edited only where forged markup is neutralized) and what was found in which.

    `locked` marks parts that must not change (signed content): they are read as part of the
    stream, so markup split between them and their neighbours is found, but what lies wholly in
    them is only reported (edited false). Markup that begins in a locked part and goes on in an
    editable one is neutralized in the first editable part it reaches, a tag at a place where the
    detector begins a unit of its name (see _break_spot)."""
    cleaned = list(parts)
    locked = list(locked) if locked is not None else [False] * len(cleaned)
    findings: list[Finding] = []
    # Each part's non-ASCII characters (usually none or a few): what the scans for non-ASCII
    # characters read instead of the text.
    others = [non_ascii(part) for part in cleaned]
    for i, part in enumerate(cleaned):
        if may_hold_smuggled_runs(part, others[i].chars):
            if locked[i]:
                findings.extend(Finding(i, SpanKind.TAG_CHARACTERS, False) for _ in smuggled_runs(part))
                continue
            cleaned[i], removed = without_smuggled_runs(part)
            findings.extend(Finding(i, SpanKind.TAG_CHARACTERS, True) for _ in range(removed))
            others[i] = non_ascii(cleaned[i])
    if nonce:
        joined = "".join(cleaned)
        edits = [_Edit(start, start, start + len(nonce), NONCE_TEXT, SpanKind.NONCE) for start in nonce_copies(joined, nonce)]
        if edits:
            cleaned = _apply(cleaned, edits, locked, findings)
            others = [non_ascii(part) for part in cleaned]
    joined = "".join(cleaned)
    hits = scan(joined, others="".join(info.chars for info in others))
    if hits:
        edits = [_Edit(h.start, h.name, h.name, RENAME_PREFIX, SpanKind.TAG) if h.kind == "tag" else _Edit(h.start, h.start, h.end, DELIMITER_TEXT[h.folded], SpanKind.DELIMITER) for h in hits]
        cleaned = _apply(cleaned, edits, locked, findings, joined, hits)
    if any(info.surrogates for info in others):
        # The edits above never add a surrogate, so text without one has no glued halves.
        cleaned = _separate_halves(cleaned, locked, findings)
    findings.sort(key=lambda finding: finding.part)
    return Stream(cleaned, findings)


def _separate_halves(parts: list[str], locked: list[bool], findings: list[Finding]) -> list[str]:
    """Every lone half that now stands next to its other half (a removed run of tag characters or
    a dropped block between them, or the boundary of two parts) becomes U+FFFD: otherwise the
    answer's JSON would carry a pair its reader joins into a character no check ever read, a tag
    character or a look-alike letter. Halves in locked parts stay and are reported."""
    joined = "".join(parts)
    if not GLUED_HALVES.search(joined):
        return parts
    halves: set[int] = set()
    for match in GLUED_HALVES.finditer(joined):
        halves.update((match.start(), match.start() + 1))
    out = []
    offset = 0
    for i, part in enumerate(parts):
        mine = [at - offset for at in sorted(halves) if offset <= at < offset + len(part)]
        offset += len(part)
        if not mine:
            out.append(part)
            continue
        findings.extend(Finding(i, SpanKind.SPLIT_CHARACTER, not locked[i]) for _ in mine)
        if locked[i]:
            out.append(part)
            continue
        chars = list(part)
        for at in mine:
            chars[at] = REPLACEMENT_CHARACTER
        out.append("".join(chars))
    return out


# ASCII characters that only ASCII characters match case-insensitively ("i", "k" and "s" have
# non-ASCII partners: the dotted capital I, the Kelvin sign, the long s).
_ASCII_CASE_ONLY = frozenset(string.digits + string.ascii_letters) - frozenset("iIkKsS")


@functools.lru_cache(maxsize=8)
def _caseless_run(nonce: str) -> str:
    """The nonce's longest run of digits (characters no letter case changes), when it is long
    enough to rule out most texts with one plain search; else ""."""
    longest = max(re.findall("[0-9]+", nonce), key=len, default="")
    return longest if len(longest) >= 3 else ""


def nonce_copies(text: str, nonce: str) -> list[int]:
    """Where copies of `nonce` start in `text`, in any letter case, without overlaps.

    A case-insensitive regular expression reads character by character; a plain search of the
    lower-cased text runs at memchr speed. For ASCII text lower-casing keeps every offset; other
    text is searched as ASCII with one "?" per other character, which keeps them too, when no
    character of the nonce has a non-ASCII case partner (the Kelvin sign is a "k" to a
    case-insensitive match; a hex nonce has none)."""
    anchor = _caseless_run(nonce)
    if anchor and anchor not in text:
        return []  # a copy in any letter case holds the nonce's digits as they are
    if text.isascii():
        return _copies(text.lower(), nonce.lower())
    if _ASCII_CASE_ONLY.issuperset(nonce):
        return _copies(text.encode("ascii", "replace").lower(), nonce.lower().encode("ascii"))
    return [m.start() for m in re.finditer(re.escape(nonce), text, re.IGNORECASE)]


def _copies(haystack: AnyStr, needle: AnyStr) -> list[int]:
    """Where `needle` starts in `haystack`, without overlaps."""
    found = []
    at = haystack.find(needle)
    while at >= 0:
        found.append(at)
        at = haystack.find(needle, at + len(needle))
    return found


def inspect(text: str, nonce: str | None = None) -> list[Span]:
    """What `sanitize` would neutralize in `text`, without editing it (offsets into `text`)."""
    spans = [Span(m.start(), m.end(), SpanKind.TAG_CHARACTERS) for m in smuggled_runs(text)] if may_hold_smuggled_runs(text, non_ascii(text).chars) else []
    if nonce:
        spans += [Span(start, start + len(nonce), SpanKind.NONCE) for start in nonce_copies(text, nonce)]
    for hit in scan(text):
        # A tag's span runs from its bracket to the start of its name; for a delimiter, the escape.
        end = hit.name if hit.kind == "tag" else hit.end
        spans.append(Span(hit.start, end, SpanKind(hit.kind)))
    if has_surrogate(text):
        spans += [Span(at, at + 1, SpanKind.SPLIT_CHARACTER) for match in GLUED_HALVES.finditer(text) for at in (match.start(), match.start() + 1)]
    spans.sort(key=lambda span: (span.start, span.end))
    return spans


def _apply(parts: list[str], edits: list[_Edit], locked: list[bool], findings: list[Finding], joined: str | None = None, hits: list[Hit] | None = None) -> list[str]:
    """Applies non-overlapping `edits` (in joined offsets, sorted by anchor) to `parts`, recording
    a finding for each. An edit whose markup begins in a locked part goes to the first unlocked
    part it reaches; one that lies wholly in locked parts is only recorded. `joined` and `hits`
    (the scan's, one per edit) are given for tags, to tell where a name ends."""
    if len(parts) == 1:
        if locked[0]:
            findings.extend(Finding(0, edit.kind, False) for edit in edits)
            return parts
        text = parts[0]
        pieces = []
        last = 0
        for edit in edits:
            pieces.append(text[last : edit.start])
            pieces.append(edit.text)
            last = edit.end
            findings.append(Finding(0, edit.kind, True))
        pieces.append(text[last:])
        return ["".join(pieces)]
    bounds = []
    offset = 0
    for part in parts:
        bounds.append((offset, offset + len(part)))
        offset += len(part)
    runs = _Runs(locked, bounds, joined)
    local: list[list[tuple[int, int, str]]] = [[] for _ in parts]
    k = 0
    for index, edit in enumerate(edits):
        while bounds[k][1] <= edit.anchor and k + 1 < len(parts):
            k += 1
        target = k
        named = _name_part(edit, k, bounds)
        if named != k and not locked[named]:
            # A rename goes in front of the name, in the part that holds it: left at the end of
            # the bracket's part, "Done. <" + "/system-reminder>" would read
            # `<untrusted-/system-reminder>`, still a closing tag to a model.
            target = named
            local[named].append((edit.start - bounds[named][0], edit.start - bounds[named][0], edit.text))
        elif named != k and not locked[k] and runs.after_locked_name(named, edit.start) >= 0 and (spot := _break_spot(cast(str, joined), cast(list[Hit], hits)[index], k, bounds, locked)) is not None:
            # The name begins in signed text and goes on after it: the prefix breaks it there.
            target, offset = spot
            local[target].append((offset, offset, edit.text))
        elif locked[k]:
            hit = hits[index] if hits else None
            target = runs.target(edit, k, hit)
            if target < 0:
                findings.append(Finding(k, edit.kind, False))
                continue
            low, high = bounds[target]
            if hit is not None and hit.kind == "tag":
                spot = _break_spot(cast(str, joined), hit, k, bounds, locked)
                if spot is None:
                    # Every editable character of the tag lies inside one unit of its name (a
                    # piece of markup, an escape): a bracket there ends the reading, since no
                    # unit holds one.
                    local[target].append((0, 0, UNIT_BREAK + edit.text))
                else:
                    target, offset = spot
                    local[target].append((offset, offset, edit.text))
            else:
                local[target].append((min(max(edit.start, low), high) - low, min(max(edit.end, low), high) - low, edit.text))
        else:
            low, high = bounds[k]
            local[k].append((min(max(edit.start, low), high) - low, min(edit.end, high) - low if edit.end > low else 0, edit.text))
        findings.append(Finding(target, edit.kind, True))
        j = target + 1
        while j < len(parts) and bounds[j][0] < edit.end:
            low, high = bounds[j]
            if not locked[j] and max(edit.start, low) < min(edit.end, high):
                local[j].append((max(edit.start, low) - low, min(edit.end, high) - low, ""))
            j += 1
    out = []
    for part, changes in zip(parts, local, strict=True):
        if not changes:
            out.append(part)
            continue
        pieces = []
        last = 0
        for start, end, replacement in changes:
            pieces.append(part[last:start])
            pieces.append(replacement)
            last = max(last, end, start)
        pieces.append(part[last:])
        out.append("".join(pieces))
    return out


def _break_spot(joined: str, hit: Hit, after: int, bounds: list[tuple[int, int]], locked: list[bool]) -> tuple[int, int] | None:
    """For a tag whose name goes on from signed text into text that may change: the first part
    after part `after` that may change and holds a place where the detector begins a unit of the
    name (part, offset in it), or None when there is none. The prefix put there is read where that
    unit was, and no name goes on with its first letter; put anywhere else in the part (its start
    may be inside `<b>` or `<!-- -->` begun in the signed text) it could be read as part of a
    piece of markup, which the detector skips, and the name would still read."""
    units = [unit for unit in name_units(joined, hit.end) if unit >= hit.name]
    # Before a letter reads best (`<sys<b></b>untrusted-tem-reminder>`); before markup will do.
    letters = [unit for unit in units if joined[unit] != "<"]
    return _first_open(letters, after, bounds, locked) or _first_open(units, after, bounds, locked)


def _first_open(units: list[int], after: int, bounds: list[tuple[int, int]], locked: list[bool]) -> tuple[int, int] | None:
    """The first of `units` (ascending joined offsets) in a part after `after` that may change."""
    count = len(bounds)
    j = after + 1
    for unit in units:
        while j < count and bounds[j][1] < unit:
            j += 1
        cand = j
        while cand < count and bounds[cand][0] <= unit:
            if not locked[cand]:
                return cand, unit - bounds[cand][0]
            cand += 1
    return None


def _name_part(edit: _Edit, k: int, bounds: list[tuple[int, int]]) -> int:
    """For a rename (an insertion) whose markup begins in part `k`, the part where the name it
    goes in front of begins; `k` for any other edit."""
    if edit.start != edit.end or edit.kind is not SpanKind.TAG:
        return k
    j = k
    while j + 1 < len(bounds) and bounds[j][1] <= edit.start:
        j += 1
    return j


class _Runs:
    """The runs of consecutive locked parts of a stream, for placing edits whose markup begins in
    one. Each run's text is cut from the joined text once, when first asked for."""

    def __init__(self, locked: list[bool], bounds: list[tuple[int, int]], joined: str | None) -> None:
        self.locked = locked
        self.bounds = bounds
        self.joined = joined
        count = len(locked)
        self.first = list(range(count))
        self.last = list(range(count))
        for i in range(1, count):
            if locked[i] and locked[i - 1]:
                self.first[i] = self.first[i - 1]
        for i in range(count - 2, -1, -1):
            if locked[i] and locked[i + 1]:
                self.last[i] = self.last[i + 1]
        self._texts: dict[int, str] = {}

    def _text(self, k: int) -> str:
        first = self.first[k]
        if first not in self._texts:
            self._texts[first] = (self.joined or "")[self.bounds[first][0] : self.bounds[self.last[k]][1]]
        return self._texts[first]

    def after_locked_name(self, k: int, name: int) -> int:
        """For a name that begins at `name` in locked part `k`: the first unlocked part after its
        locked run when the name goes on there, -1 when the run spells all of it (then the one
        place left to edit is before the name)."""
        last = self.last[k]
        if last + 1 >= len(self.bounds):
            return -1
        if tag_name_at(self._text(k), name - self.bounds[self.first[k]][0]) is not None:
            return -1
        return last + 1

    def target(self, edit: _Edit, k: int, hit: Hit | None) -> int:
        """Where an edit whose markup begins in locked part `k` goes: the first unlocked part the
        markup reaches, or -1 when it lies wholly in locked parts."""
        last = self.last[k]
        if last + 1 >= len(self.bounds):
            return -1
        if hit is not None and hit.kind == "tag":
            # A rename. The name is read on from the bracket: when the locked run holding the
            # bracket spells all of it, the tag is wholly locked text. Otherwise the name goes on
            # after the run, and the prefix put where it goes on breaks it (the prefix begins
            # with a letter that no spelling of a name has there).
            run_start = self.bounds[self.first[k]][0]
            run_end = self.bounds[last][1]
            if hit.end <= run_end and tag_name_at(self._text(k), hit.end - run_start) is not None:
                return -1
            return last + 1
        # A replacement: the first unlocked part its span covers.
        return last + 1 if self.bounds[last + 1][0] < edit.end else -1
