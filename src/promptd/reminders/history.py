"""Stored history made safe to reuse (seed 003: stored prompts are sanitized on reuse).

Domain layer: must not import promptd.rpc or promptd.methods.

Rules, per message role:
- `user`: blocks carrying the current nonce were written by this process's trusted wrapper and are
  kept as they are. Blocks carrying another nonce come from an earlier process: they are dropped,
  and where one carried a display trigger a one-line trace takes its place so a person can still
  see that something happened. Everything else (including plain seed-000 blocks without a nonce)
  gets the full sanitizer.
- every other role (`assistant`, `tool`, `system`, anything): the full sanitizer, current-nonce
  blocks included, since a model can echo a block it has seen and a tool can return one.
The result is a fixed point: sanitizing it again changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from promptd.reminders.provenance import parse_marked
from promptd.reminders.sanitize import map_strings, sanitize

USER_ROLE = "user"
# A trace is one line in a transcript; longer triggers are cut.
TRACE_MAX_CHARS = 200


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
    line = " ".join(trigger.split())
    if len(line) > TRACE_MAX_CHARS:
        line = line[: TRACE_MAX_CHARS - 1] + "…"
    return f"[reminder from an earlier session: {line}]"


def user_text(text: str, nonce: str) -> tuple[str, int, int]:
    """One stored user string: (text, neutralized, dropped)."""
    pieces: list[str] = []
    pending: list[str] = []
    neutralized = dropped = 0
    last = 0

    def flush() -> None:
        nonlocal neutralized
        if pending:
            cleaned = sanitize("".join(pending), nonce)
            pieces.append(cleaned.text)
            neutralized += cleaned.neutralized
            pending.clear()

    for block, carries_nonce in parse_marked(text, nonce):
        if block.authenticated:
            pending.append(text[last : block.start])
            flush()
            pieces.append(text[block.start : block.end])
        elif carries_nonce:
            pending.append(text[last : block.start])
            if block.display_trigger is not None:
                pending.append(trace(block.display_trigger))
            dropped += 1
        else:
            continue  # a plain block is ordinary untrusted text: sanitized with what follows
        last = block.end
    pending.append(text[last:])
    flush()
    return "".join(pieces), neutralized, dropped


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
