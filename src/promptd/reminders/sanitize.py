"""The sanitizer: untrusted text in, text that can never pass for a runtime reminder out.

Domain layer: must not import promptd.rpc or promptd.methods.

Every origin (user, tool, model, stored) gets the same full treatment; see docs/security.md. In
order:
1. Unicode tag characters (U+E0000-U+E007F, the "ASCII smuggling" alphabet) are removed, each run
   counted once. They are the one thing removed rather than escaped: they are invisible to a
   person, readable to a model, and carry nothing a reader needs.
2. Copies of the current process's nonce, in any letter case, become "[nonce]".
3. Forged reminder tags and display-trigger tags are found on a folded, decoded view of the text
   (promptd.reminders.sanitizer.detect) and renamed in the original: RENAME_PREFIX goes in front
   of the tag's name, so `<system-reminder>` reads `<untrusted-system-reminder>`. The bracket and
   the rest stay as written, so a person sees what was attempted and a model reads an element that
   is not a reminder.
4. Reminder delimiters U+E203 / U+E204 (raw or escaped) become the visible text "[U+E203]" /
   "[U+E204]".

Text parts that a host joins into one text (MCP content items, text blocks) are sanitized as one
stream (`sanitize_stream`): a tag split across parts is found on the joined text and neutralized
in the part where it starts. Parts that must not change (signed content) can be marked: they are
read with the stream and what lies wholly in them is reported, not edited.

None of the replacements can be read as the thing it replaced, nor join with its neighbours into
a new one, so sanitizing twice gives the same text (idempotent) and counts nothing the second time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from promptd.reminders.kinds import SpanKind
from promptd.reminders.sanitizer.detect import Hit, scan, tag_name_at
from promptd.text import has_astral

_TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]+")
DELIMITER_TEXT = {"\ue203": "[U+E203]", "\ue204": "[U+E204]"}
NONCE_TEXT = "[nonce]"
# Put in front of a forged tag's name. It begins with a letter no tag name begins with, so the
# renamed tag never reads as one again (idempotence), and it ends in "-" so it reads as a prefix.
RENAME_PREFIX = "untrusted-"
# Structured values nested deeper than this are replaced by DEPTH_MARKER. Real tool results stay
# well under it; the limit keeps recursion far from the interpreter's own.
MAX_VALUE_DEPTH = 64
DEPTH_MARKER = f"[promptd: value nested deeper than {MAX_VALUE_DEPTH} levels withheld]"
# Content parts whose "text" a host joins with its neighbours into what the model reads: MCP
# content items and Anthropic text blocks ("text"), OpenAI Responses parts (input_/output_text),
# streamed deltas ("text_delta"); parts without a type count too (is_text_part).
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text", "text_delta"})


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
    stream = sanitize_stream([text], nonce)
    return Sanitized(stream.texts[0], stream.neutralized)


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
    editable one is neutralized in the first editable part it reaches."""
    cleaned = list(parts)
    locked = list(locked) if locked is not None else [False] * len(cleaned)
    findings: list[Finding] = []
    for i, part in enumerate(cleaned):
        if has_astral(part) and _TAG_CHARACTERS.search(part):
            if locked[i]:
                findings.extend(Finding(i, SpanKind.TAG_CHARACTERS, False) for _ in _TAG_CHARACTERS.finditer(part))
                continue
            cleaned[i], removed = _TAG_CHARACTERS.subn("", part)
            findings.extend(Finding(i, SpanKind.TAG_CHARACTERS, True) for _ in range(removed))
    if nonce:
        joined = "".join(cleaned)
        edits = [_Edit(start, start, start + len(nonce), NONCE_TEXT, SpanKind.NONCE) for start in nonce_copies(joined, nonce)]
        if edits:
            cleaned = _apply(cleaned, edits, locked, findings)
    joined = "".join(cleaned)
    hits = scan(joined)
    if hits:
        edits = [
            _Edit(h.start, h.name, h.name, RENAME_PREFIX, SpanKind.TAG)
            if h.kind == "tag"
            else _Edit(h.start, h.start, h.end, DELIMITER_TEXT[h.folded], SpanKind.DELIMITER)
            for h in hits
        ]
        cleaned = _apply(cleaned, edits, locked, findings, joined, hits)
    findings.sort(key=lambda finding: finding.part)
    return Stream(cleaned, findings)


def nonce_copies(text: str, nonce: str) -> list[int]:
    """Where copies of `nonce` start in `text`, in any letter case, without overlaps.

    A case-insensitive regular expression reads character by character; for ASCII text (where
    lower-casing keeps every offset) a plain search of the lower-cased text runs at memchr speed."""
    if not text.isascii():
        return [m.start() for m in re.finditer(re.escape(nonce), text, re.IGNORECASE)]
    lowered, needle = text.lower(), nonce.lower()
    found = []
    at = lowered.find(needle)
    while at >= 0:
        found.append(at)
        at = lowered.find(needle, at + len(needle))
    return found


def inspect(text: str, nonce: str | None = None) -> list[Span]:
    """What `sanitize` would neutralize in `text`, without editing it (offsets into `text`)."""
    spans = [Span(m.start(), m.end(), SpanKind.TAG_CHARACTERS) for m in _TAG_CHARACTERS.finditer(text)] if has_astral(text) else []
    if nonce:
        spans += [Span(start, start + len(nonce), SpanKind.NONCE) for start in nonce_copies(text, nonce)]
    for hit in scan(text):
        # A tag's span runs from its bracket to the start of its name; for a delimiter, the escape.
        end = hit.name if hit.kind == "tag" else hit.end
        spans.append(Span(hit.start, end, SpanKind(hit.kind)))
    spans.sort(key=lambda span: (span.start, span.end))
    return spans


def _apply(parts: list[str], edits: list[_Edit], locked: list[bool], findings: list[Finding], joined: str | None = None, hits: list[Hit] | None = None
) -> list[str]:
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
        if locked[k]:
            target = runs.target(edit, k, hits[index] if hits else None)
            if target < 0:
                findings.append(Finding(k, edit.kind, False))
                continue
            low, high = bounds[target]
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


def sanitize_value(value: object, nonce: str | None = None) -> tuple[object, int]:
    """Sanitizes every string and every object key in a JSON-shaped value.

    Consecutive text parts of a list (strings, or objects whose "type" is a text type and whose
    "text" is a string) are sanitized as one stream. Keys that become equal after sanitizing are
    both kept: later ones get a visible " [duplicate key N]" suffix rather than silently
    overwriting an earlier one. A value nested deeper than MAX_VALUE_DEPTH is replaced by
    DEPTH_MARKER (fail closed: its content is not passed on).
    """
    counter = [0]
    result = _value(value, nonce, 0, counter)
    return result, counter[0]


def is_text_part(item: object) -> bool:
    """A string, or an object with a string "text" and either a text type or no type at all
    (Gemini parts and Bedrock content blocks are `{"text": ...}`)."""
    if isinstance(item, str):
        return True
    return isinstance(item, dict) and isinstance(item.get("text"), str) and ("type" not in item or item["type"] in TEXT_PART_TYPES)


def part_text(item: object) -> str:
    return item if isinstance(item, str) else item["text"]  # type: ignore[index]


def text_part_with(item: dict[str, object], text: str, nonce: str | None, depth: int = 1) -> tuple[dict[str, object], int]:
    """A text part object at `depth` carrying its already sanitized `text`; its other fields
    and keys sanitized. Returns the part and the count."""
    counter = [0]
    out = _object(item, lambda field: _value(field, nonce, depth + 1, counter), nonce, counter, text)
    return out, counter[0]


def _value(value: object, nonce: str | None, depth: int, counter: list[int]) -> object:
    if isinstance(value, str):
        cleaned = sanitize(value, nonce)
        counter[0] += cleaned.neutralized
        return cleaned.text
    if not isinstance(value, (dict, list, tuple)):
        return value
    if depth >= MAX_VALUE_DEPTH:
        counter[0] += 1
        return DEPTH_MARKER
    if isinstance(value, dict):
        return _object(value, lambda item: _value(item, nonce, depth + 1, counter), nonce, counter)
    return _list(list(value), nonce, depth, counter)


# How a run of consecutive text parts is sanitized: (texts, is the list's last run) -> (texts, count).
RunRule = Callable[[list[str], bool], tuple[list[str], int]]


def _list(items: list[object], nonce: str | None, depth: int, counter: list[int]) -> list[object]:
    return map_list(items, nonce, depth, counter, lambda texts, last: sanitize_parts(texts, nonce))


def map_list(items: list[object], nonce: str | None, depth: int, counter: list[int], run_rule: RunRule) -> list[object]:
    """A list at `depth` with every item cleaned: runs of consecutive text parts through
    `run_rule` (as one stream), everything else through the full sanitizer."""
    out: list[object] = []
    last_text = max((k for k, item in enumerate(items) if is_text_part(item)), default=-1)
    i = 0
    while i < len(items):
        if not is_text_part(items[i]):
            out.append(_value(items[i], nonce, depth + 1, counter))
            i += 1
            continue
        j = i
        while j < len(items) and is_text_part(items[j]):
            j += 1
        run = items[i:j]
        texts, count = run_rule([part_text(item) for item in run], j > last_text)
        counter[0] += count
        # The part object itself is one level deeper than the list, its fields one more.
        for item, text in zip(run, texts, strict=True):
            if isinstance(item, dict):
                part, count = text_part_with(item, text, nonce, depth + 1)
                counter[0] += count
                out.append(part)
            else:
                out.append(text)
        i = j
    return out


def _object(
    value: dict[str, object], clean_item: Callable[[object], object], nonce: str | None, counter: list[int], text: str | None = None
) -> dict[str, object]:
    """`value` with keys sanitized and fields cleaned; with `text`, a text part's already
    sanitized "text" field. A key sanitizing leaves as it was keeps its name; a key it changes
    never takes a name another key already has (it gets a visible suffix instead), so a key that
    only looks like another cannot take that key's place."""
    names: list[tuple[str, bool]] = []
    for key in value:
        cleaned = sanitize(str(key), nonce)
        counter[0] += cleaned.neutralized
        names.append((cleaned.text, cleaned.text == key))
    taken: dict[str, object] = {name: None for name, unchanged in names if unchanged}
    # Per base name, the next duplicate number to try: renaming stays linear however many collide.
    next_number: dict[str, int] = {}
    out: dict[str, object] = {}
    for (key, item), (name, unchanged) in zip(value.items(), names, strict=True):
        if not unchanged:
            name = _unique(name, taken, next_number)
            taken[name] = None
        out[name] = text if text is not None and key == "text" else clean_item(item)
    return out


def _unique(name: str, taken: dict[str, object], next_number: dict[str, int]) -> str:
    if name not in taken:
        return name
    n = next_number.get(name, 2)
    while f"{name} [duplicate key {n}]" in taken:
        n += 1
    next_number[name] = n + 1
    return f"{name} [duplicate key {n}]"
