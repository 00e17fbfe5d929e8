"""What a turn's user-role message is made of, besides the assembled reminder itself: the file
notices the host reports for the turn, and the join of the user's text with the reminder.

Domain layer: plain functions over plain data (the one wait is assemble.at_once_unless_large, the
assembly's own); imports nothing from methods/, rpc/ or the server.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import NamedTuple

from promptd.assembly.assemble import at_once_unless_large
from promptd.reminders import markup
from promptd.reminders.kinds import MessageShape

# Between the user's text and the reminder: a blank line, so each stays its own paragraph.
SEPARATOR = markup.BLANK_LINE


class Composed(NamedTuple):
    # The user's sanitized text, a blank line, the reminder.
    content: str
    # The same texts as a user message of the shape asked for (promptd.assembly.message); None
    # when no shape was asked for.
    message: dict[str, object] | None


def join(user_text: str, reminder_text: str) -> str:
    """The user's (already sanitized) text, a blank line, then the reminder; either alone when
    the other is empty."""
    if user_text and reminder_text:
        return f"{user_text}{SEPARATOR}{reminder_text}"
    return user_text or reminder_text


def compose(user_message: str, reminder_text: str, nonce: str, shape: MessageShape | None = None) -> Composed | Awaitable[Composed]:
    """The turn's user-role message: the user's text sanitized and joined with the reminder, and
    with `shape` the same as that SDK's message; at once, or (for a large text) an awaitable that
    sanitizes it in a worker thread."""

    def build() -> Composed:
        from promptd.reminders.sanitize import sanitize

        user_text = sanitize(user_message, nonce).text
        content = join(user_text, reminder_text)
        if shape is None:
            return Composed(content, None)
        from promptd.assembly.message import user_message as shaped

        return Composed(content, shaped(shape, user_text, reminder_text, content))

    return at_once_unless_large(len(user_message), build)
