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

Consecutive text parts that a host joins into one text (MCP content items, text blocks) are
sanitized as one stream (`sanitize_parts`): a tag split across parts is found on the joined text
and neutralized in the part where it starts.

None of the replacements can be read as the thing it replaced, nor join with its neighbours into
a new one, so sanitizing twice gives the same text (idempotent) and counts nothing the second time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from promptd.reminders.kinds import SpanKind
from promptd.reminders.sanitizer.detect import scan
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


# One edit on the joined text of a stream of parts: replace [start, end) with `text`, written into
# the part that holds `anchor` (where the forged markup begins); what [start, end) covers in later
# parts is removed.
_Edit = tuple[int, int, int, str]


def sanitize(text: str, nonce: str | None = None) -> Sanitized:
    """Neutralizes forged reminder markup in untrusted `text`; with `nonce`, also copies of it."""
    parts, count = sanitize_parts([text], nonce)
    return Sanitized(parts[0], count)


def sanitize_parts(parts: Sequence[str], nonce: str | None = None) -> tuple[list[str], int]:
    """Sanitizes consecutive text parts that a reader may join, as one stream. Returns the parts
    (as many as given, each edited only where forged markup starts in it) and the count."""
    count = 0
    cleaned = list(parts)
    for i, part in enumerate(cleaned):
        if has_astral(part) and _TAG_CHARACTERS.search(part):
            cleaned[i], removed = _TAG_CHARACTERS.subn("", part)
            count += removed
    if nonce:
        joined = "".join(cleaned)
        edits = [(start, start, start + len(nonce), NONCE_TEXT) for start in nonce_copies(joined, nonce)]
        if edits:
            cleaned = _apply(cleaned, edits)
            count += len(edits)
    joined = "".join(cleaned)
    hits = scan(joined)
    if hits:
        edits = [
            (h.start, h.name, h.name, RENAME_PREFIX) if h.kind == "tag" else (h.start, h.start, h.end, DELIMITER_TEXT[h.folded])
            for h in hits
        ]
        cleaned = _apply(cleaned, edits)
        count += len(hits)
    return cleaned, count


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


def _apply(parts: list[str], edits: list[_Edit]) -> list[str]:
    """Applies non-overlapping `edits` (in joined offsets, sorted by anchor) to `parts`."""
    if len(parts) == 1:
        text = parts[0]
        pieces = []
        last = 0
        for _, start, end, replacement in edits:
            pieces.append(text[last:start])
            pieces.append(replacement)
            last = end
        pieces.append(text[last:])
        return ["".join(pieces)]
    bounds = []
    offset = 0
    for part in parts:
        bounds.append((offset, offset + len(part)))
        offset += len(part)
    local: list[list[tuple[int, int, str]]] = [[] for _ in parts]
    k = 0
    for anchor, start, end, replacement in edits:
        while bounds[k][1] <= anchor and k + 1 < len(parts):
            k += 1
        low, high = bounds[k]
        local[k].append((min(max(start, low), high) - low, min(end, high) - low if end > low else 0, replacement))
        j = k + 1
        while j < len(parts) and bounds[j][0] < end:
            low, high = bounds[j]
            if max(start, low) < min(end, high):
                local[j].append((max(start, low) - low, min(end, high) - low, ""))
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
