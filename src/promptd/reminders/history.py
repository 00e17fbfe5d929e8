"""Stored history made safe to reuse (seed 003: stored prompts are sanitized on reuse).

Domain layer: must not import promptd.rpc or promptd.methods.

Rules, per message role:
- `user`: a block carrying the current nonce is kept as it is only in the one shape `turn/compose`
  writes: the string is either that block alone, or already-sanitized user text, a blank line and
  the block, which ends the string; and the block is byte for byte what `wrap_trusted` writes for
  its body, a body `wrap_trusted` accepts. The nonce alone proves nothing (the model can read and
  repeat it), so a current-nonce block anywhere else (in the middle, one of several, after text
  that is not sanitized, written by hand in another layout) is untrusted text and is sanitized.
  Blocks carrying another nonce come from an earlier process: they are dropped, and where one
  carried a display trigger a one-line trace takes its place so a person can still see that
  something happened. Everything else (including plain seed-000 blocks without a nonce) gets the
  full sanitizer.
- every other role (`assistant`, `tool`, `system`, anything): the full sanitizer, current-nonce
  blocks included, since a model can echo a block it has seen and a tool can return one.
The result is a fixed point: sanitizing it again changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from promptd.errors import NestedMarker
from promptd.reminders.provenance import Block, parse_marked, wrap_trusted
from promptd.reminders.sanitize import map_strings, sanitize
from promptd.text import one_line

USER_ROLE = "user"
# A trace is one line in a transcript; longer triggers are cut.
TRACE_MAX_CHARS = 200
# What `turn/compose` puts between the user's text and the reminder.
COMPOSE_SEPARATOR = "\n\n"
# Stands in for a body when the writer's frame is taken apart: no nonce, delimiter or tag contains it.
_BODY_SENTINEL = "\x00"


@dataclass(frozen=True)
class Message:
    role: str
    content: object


@dataclass(frozen=True)
class History:
    messages: list[Message]
    neutralized: int
    dropped: int


def trace(trigger: str) -> str:
    """The visible line left where a stale block with a display trigger was dropped."""
    return f"[reminder from an earlier session: {one_line(trigger, TRACE_MAX_CHARS)}]"


def _written_by_wrapper(segment: str, style: str, nonce: str) -> bool:
    """Whether `segment` is exactly what `wrap_trusted` writes for some body it accepts."""
    # The frame comes from the writer itself, so this check cannot drift from its layout.
    head, _, tail = wrap_trusted(_BODY_SENTINEL, nonce, style).partition(_BODY_SENTINEL)
    if len(segment) < len(head) + len(tail) or not segment.startswith(head) or not segment.endswith(tail):
        return False
    try:
        return wrap_trusted(segment[len(head) : len(segment) - len(tail)], nonce, style) == segment
    except NestedMarker:
        return False  # a body the writer would refuse: reminder markup or the nonce inside it


def composed(text: str, block: Block, nonce: str) -> bool:
    """Whether `block`, one of `text`'s current-nonce blocks, sits where `turn/compose` puts its
    reminder: alone, or as the final suffix after sanitized user text and a blank line."""
    if not block.authenticated or block.end != len(text):
        return False
    if block.start:
        before = text[: block.start]
        if not before.endswith(COMPOSE_SEPARATOR):
            return False
        user = before[: -len(COMPOSE_SEPARATOR)]
        # compose skips the separator when the user's text is empty; and the user's text is
        # sanitized, so sanitizing it again changes nothing. This also rules out any other block
        # before this one: every block holds a delimiter, a tag or the nonce.
        if not user or sanitize(user, nonce).text != user:
            return False
    return _written_by_wrapper(text[block.start : block.end], block.style, nonce)


def user_text(text: str, nonce: str) -> tuple[str, int, int]:
    """One stored user string: (text, neutralized, dropped)."""
    marked = parse_marked(text, nonce)
    if marked and composed(text, marked[-1][0], nonce):
        # What compose wrote, unchanged: clean text before one trusted block, so nothing to do.
        return text, 0, 0
    # Stale blocks are dropped first and the rest is sanitized as one string, so text on both
    # sides of a dropped block cannot join into a tag.
    pieces: list[str] = []
    dropped = 0
    last = 0
    for block, carries_nonce in marked:
        if block.authenticated or not carries_nonce:
            # A plain block, or a current-nonce block not in compose's shape, is ordinary
            # untrusted text: sanitized with the text around it.
            continue
        pieces.append(text[last : block.start])
        if block.display_trigger is not None:
            pieces.append(trace(block.display_trigger))
        dropped += 1
        last = block.end
    pieces.append(text[last:])
    cleaned = sanitize("".join(pieces), nonce)
    return cleaned.text, cleaned.neutralized, dropped


def sanitize_message(role: str, content: object, nonce: str) -> tuple[Message, int, int]:
    """One stored message: (message, neutralized, dropped). `content` may be a string or any
    JSON value (a list of content parts); every string in it gets the role's rule."""
    dropped = 0
    if role == USER_ROLE:

        def rule(text: str) -> tuple[str, int]:
            nonlocal dropped
            cleaned, count, gone = user_text(text, nonce)
            dropped += gone
            return cleaned, count

    else:

        def rule(text: str) -> tuple[str, int]:
            cleaned = sanitize(text, nonce)
            return cleaned.text, cleaned.neutralized

    value, neutralized = map_strings(content, rule, nonce)
    return Message(role, value), neutralized, dropped


def sanitize_history(messages: Iterable[Message], nonce: str) -> History:
    out: list[Message] = []
    neutralized = dropped = 0
    for message in messages:
        cleaned, count, gone = sanitize_message(message.role, message.content, nonce)
        out.append(cleaned)
        neutralized += count
        dropped += gone
    return History(out, neutralized, dropped)
