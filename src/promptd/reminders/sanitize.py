"""The sanitizer: untrusted text in, text that can never pass for a runtime reminder out.

Domain layer: must not import promptd.rpc or promptd.methods.

Every origin (user, tool, model, stored) gets the same full treatment; see docs/security.md. In
order:
1. Unicode tag characters (U+E0000-U+E007F, the "ASCII smuggling" alphabet) are removed, each run
   counted once. They are the one thing removed rather than escaped: they are invisible to a
   person, readable to a model, and carry nothing a reader needs.
2. Forged reminder tags and display-trigger tags are found on a folded, decoded view of the text
   (promptd.reminders.sanitizer.detect) and defused in the original by replacing the tag's opening
   bracket, in whatever form it was written, with U+2039 "‹". The rest of the tag stays as written,
   so a person can still see what was attempted.
3. Reminder delimiters U+E203 / U+E204 (raw or escaped) become the visible text "[U+E203]" /
   "[U+E204]".
4. Copies of the current process's nonce, in any letter case, become "[nonce]".

None of the replacements can be read as the thing it replaced, nor join with its neighbours into
a new one, so sanitizing twice gives the same text (idempotent) and counts nothing the second time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from promptd.reminders.sanitizer.detect import Hit, scan
from promptd.reminders.sanitizer.fold import NEUTRAL_BRACKET

_TAG_CHARACTERS = re.compile("[\U000e0000-\U000e007f]+")
DELIMITER_TEXT = {"\ue203": "[U+E203]", "\ue204": "[U+E204]"}
NONCE_TEXT = "[nonce]"
# Structured values nested deeper than this are replaced by DEPTH_MARKER. Real tool results stay
# well under it; the limit keeps recursion far from the interpreter's own.
MAX_VALUE_DEPTH = 64
DEPTH_MARKER = f"[promptd: value nested deeper than {MAX_VALUE_DEPTH} levels withheld]"


@dataclass(frozen=True)
class Sanitized:
    text: str
    neutralized: int


def _replacement(hit: Hit) -> str:
    if hit.kind == "tag":
        return NEUTRAL_BRACKET
    return DELIMITER_TEXT[hit.folded]


def sanitize(text: str, nonce: str | None = None) -> Sanitized:
    """Neutralizes forged reminder markup in untrusted `text`; with `nonce`, also copies of it."""
    count = 0
    if _TAG_CHARACTERS.search(text):
        text, removed = _TAG_CHARACTERS.subn("", text)
        count += removed
    hits = scan(text)
    if hits:
        pieces = []
        last = 0
        for hit in hits:
            pieces.append(text[last : hit.start])
            pieces.append(_replacement(hit))
            last = hit.end
        pieces.append(text[last:])
        text = "".join(pieces)
        count += len(hits)
    if nonce:
        text, copies = re.subn(re.escape(nonce), NONCE_TEXT, text, flags=re.IGNORECASE)
        count += copies
    return Sanitized(text, count)


def sanitize_value(value: object, nonce: str | None = None) -> tuple[object, int]:
    """Sanitizes every string and every object key in a JSON-shaped value.

    Keys that become equal after sanitizing are both kept: later ones get a visible " [duplicate
    key N]" suffix rather than silently overwriting an earlier one. A value nested deeper than
    MAX_VALUE_DEPTH is replaced by DEPTH_MARKER (fail closed: its content is not passed on).
    """

    def text(value: str) -> tuple[str, int]:
        cleaned = sanitize(value, nonce)
        return cleaned.text, cleaned.neutralized

    return map_strings(value, text, nonce)


TextRule = Callable[[str], tuple[str, int]]


def map_strings(value: object, rule: TextRule, nonce: str | None = None) -> tuple[object, int]:
    """Applies `rule` to every string in a JSON-shaped value; object keys always get the plain
    sanitizer. Returns the new value and the total count the rule and the key sanitizer report."""
    counter = [0]
    result = _value(value, rule, nonce, 0, counter)
    return result, counter[0]


def _value(value: object, rule: TextRule, nonce: str | None, depth: int, counter: list[int]) -> object:
    if isinstance(value, str):
        text, count = rule(value)
        counter[0] += count
        return text
    if not isinstance(value, (dict, list, tuple)):
        return value
    if depth >= MAX_VALUE_DEPTH:
        counter[0] += 1
        return DEPTH_MARKER
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            cleaned = sanitize(str(key), nonce)
            counter[0] += cleaned.neutralized
            out[_unique(cleaned.text, out)] = _value(item, rule, nonce, depth + 1, counter)
        return out
    return [_value(item, rule, nonce, depth + 1, counter) for item in value]


def _unique(name: str, taken: dict[str, object]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name} [duplicate key {n}]" in taken:
        n += 1
    return f"{name} [duplicate key {n}]"
