"""What a turn's user-role message is made of, besides the assembled reminder itself: the file
notices the host reports for the turn, and the join of the user's text with the reminder.

Domain layer: plain functions over plain data (the one wait is assemble.at_once_unless_large, the
assembly's own); imports nothing from methods/, rpc/ or the server.
"""

from __future__ import annotations

from collections.abc import Awaitable

from promptd.assembly.assemble import at_once_unless_large
from promptd.reminders import markup

# Between the user's text and the reminder: a blank line, so each stays its own paragraph.
SEPARATOR = markup.BLANK_LINE


def join(user_text: str, reminder_text: str) -> str:
    """The user's (already sanitized) text, a blank line, then the reminder; either alone when
    the other is empty."""
    if user_text and reminder_text:
        return f"{user_text}{SEPARATOR}{reminder_text}"
    return user_text or reminder_text


def user_content(user_message: str, reminder_text: str, nonce: str) -> str | Awaitable[str]:
    """The content of the turn's user-role message: the user's text sanitized and joined with the
    reminder; at once, or (for a large text) an awaitable that sanitizes it in a worker thread."""
    from promptd.reminders.sanitize import sanitize

    return at_once_unless_large(len(user_message), lambda: join(sanitize(user_message, nonce).text, reminder_text))
