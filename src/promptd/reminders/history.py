"""Stored history made safe to reuse (stored prompts are sanitized on reuse).

Domain layer: must not import promptd.rpc or promptd.methods.

Rules, per message role:
- `user`: the user's own text (the content when it is a string, or a top-level text part of a
  content list) may keep one current block as it is, only in the shape `turn/compose` writes: the
  block ends the text and is either all of it or follows already-sanitized user text and a blank
  line; and the block authenticates (this process wrote exactly those bytes, promptd.reminders
  .ledger). Anything else that carries the current nonce (in the middle, one of several, after
  text that is not sanitized, inside a tool_result or any nested value) is untrusted text and is
  sanitized. In the user's own text, blocks carrying another nonce come from an earlier process:
  they are dropped, and where one carried a display trigger a one-line trace takes its place so a
  person can still see that something happened.
- every other role (`assistant`, `tool`, `system`, anything): the full sanitizer, since a model
  can echo a block it has seen and a tool can return one; except a `system` message that is
  exactly a system prompt this process rendered, which comes back unchanged.
Consecutive text parts of one message are sanitized as one stream, so a tag split across parts is
neutralized where it starts. The result is a fixed point: sanitizing it again changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from promptd.reminders.ledger import Kind
from promptd.reminders.kinds import BlockStyle, Refusal
from promptd.reminders.ledger import Trust
from promptd.reminders.provenance import Block, parse_marked
from promptd.reminders.sanitize import map_list, sanitize, sanitize_parts, sanitize_value
from promptd.text import one_line

USER_ROLE = "user"
SYSTEM_ROLE = "system"
# A trace is one line in a transcript; longer triggers are cut.
TRACE_MAX_CHARS = 200
# What `turn/compose` puts between the user's text and the reminder.
COMPOSE_SEPARATOR = "\n\n"


class Message(NamedTuple):
    role: str
    content: object


class History(NamedTuple):
    messages: list[Message]
    neutralized: int
    dropped: int


def trace(trigger: str) -> str:
    """The visible line left where a stale block with a display trigger was dropped."""
    return f"[reminder from an earlier session: {one_line(trigger, TRACE_MAX_CHARS)}]"


def composed(text: str, block: Block, nonce: str) -> bool:
    """Whether `block`, one of `text`'s blocks, sits where `turn/compose` puts its reminder and
    authenticates: alone, or as the final suffix after sanitized user text and a blank line."""
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
    return True


@dataclass
class _Own:
    """One piece of the user's own text, prepared for sanitizing as part of a stream."""

    text: str  # what goes into the stream
    kept_block: str  # a compose block kept after it ("" when none); it ends the stream
    dropped: int


def _own_text(text: str, trust: Trust, style: BlockStyle, may_keep: bool) -> _Own:
    marked = parse_marked(text, trust, style)
    if may_keep and marked and composed(text, marked[-1][0], trust.nonce):
        block = marked[-1][0]
        return _Own(text[: block.start], text[block.start :], 0)
    # Stale blocks are dropped first and the rest is sanitized as one string, so text on both
    # sides of a dropped block cannot join into a tag.
    pieces: list[str] = []
    dropped = 0
    last = 0
    for block, carries_nonce in marked:
        if not carries_nonce or block.refusal is not Refusal.OTHER_PROCESS:
            # A plain block, or a current-nonce block not in compose's shape, is ordinary
            # untrusted text: sanitized with the text around it.
            continue
        pieces.append(text[last : block.start])
        if block.display_trigger is not None:
            pieces.append(trace(block.display_trigger))
        dropped += 1
        last = block.end
    pieces.append(text[last:])
    return _Own("".join(pieces), "", dropped)


def _own_parts(texts: list[str], trust: Trust, style: BlockStyle, last_is_final: bool = True) -> tuple[list[str], int, int]:
    """The user's own text parts (consecutive, joined by the reader): (texts, neutralized, dropped).
    Only the last part, and only when no text part of the message follows it (`last_is_final`),
    may keep a compose block: a reader joins the parts, and the block must end the joined text."""
    owns = [_own_text(text, trust, style, last_is_final and index == len(texts) - 1) for index, text in enumerate(texts)]
    cleaned, neutralized = sanitize_parts([own.text for own in owns], trust.nonce)
    out = [text + own.kept_block for text, own in zip(cleaned, owns, strict=True)]
    return out, neutralized, sum(own.dropped for own in owns)


def user_text(text: str, trust: Trust, style: BlockStyle) -> tuple[str, int, int]:
    """One stored user string: (text, neutralized, dropped)."""
    texts, neutralized, dropped = _own_parts([text], trust, style)
    return texts[0], neutralized, dropped


def _user_content(content: object, trust: Trust, style: BlockStyle) -> tuple[object, int, int]:
    if isinstance(content, str):
        return user_text(content, trust, style)
    if not isinstance(content, list):
        value, neutralized = sanitize_value(content, trust.nonce)
        return value, neutralized, 0
    dropped = 0

    def own_run(texts: list[str], last: bool) -> tuple[list[str], int]:
        nonlocal dropped
        cleaned, count, gone = _own_parts(texts, trust, style, last)
        dropped += gone
        return cleaned, count

    counter = [0]
    value = map_list(content, trust.nonce, 0, counter, own_run)
    return value, counter[0], dropped


def sanitize_message(role: str, content: object, trust: Trust, style: BlockStyle) -> tuple[Message, int, int]:
    """One stored message: (message, neutralized, dropped). `content` may be a string or any
    JSON value (a list of content parts)."""
    if role == USER_ROLE:
        value, neutralized, dropped = _user_content(content, trust, style)
        return Message(role, value), neutralized, dropped
    if role == SYSTEM_ROLE and isinstance(content, str) and trust.ledger.holds(content, Kind.PROMPT):
        return Message(role, content), 0, 0
    value, neutralized = sanitize_value(content, trust.nonce)
    return Message(role, value), neutralized, 0


def sanitize_history(messages: Iterable[Message], trust: Trust, style: BlockStyle) -> History:
    out: list[Message] = []
    neutralized = dropped = 0
    for message in messages:
        cleaned, count, gone = sanitize_message(message.role, message.content, trust, style)
        out.append(cleaned)
        neutralized += count
        dropped += gone
    return History(out, neutralized, dropped)
