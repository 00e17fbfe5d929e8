"""The formatter of the keyed reminder format, `<system-reminder key="...">`.

Byte-exact with the format: the open tag, a newline, the escaped body, a newline, the close
tag; blocks joined by one blank line. The nested-marker check runs on the raw body, before
escaping, so a forged tag is refused rather than quietly defused.
"""

from __future__ import annotations

import re

from promptd.errors import InvalidKey, NestedMarker
from promptd.reminders import markup

# A key names a kind of reminder (`todo.nudge`, `file.modified`): 128 characters is far more than
# one needs, and it bounds what a session's delivery log keeps per key (sessions.store).
MAX_KEY_CHARS = 128
KEY_PATTERN = re.compile(rf"[A-Za-z0-9._-]{{1,{MAX_KEY_CHARS}}}")
OPEN_MARKER = markup.REMINDER_OPEN
CLOSE_MARKER = markup.REMINDER_CLOSE
SEPARATOR = markup.BLANK_LINE


def check_key(key: str) -> str:
    if not KEY_PATTERN.fullmatch(key):
        raise InvalidKey(f"reminder key must match [A-Za-z0-9._-]+, 1 to {MAX_KEY_CHARS} characters", key_length=len(key), limit=MAX_KEY_CHARS)
    return key


def escape_body(body: str) -> str:
    # Order matters: `&` first, or the entities made for `<` and `>` would be escaped again.
    return body.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def check_body(body: str) -> str:
    if OPEN_MARKER in body or CLOSE_MARKER in body:
        raise NestedMarker("reminder body must not contain <system-reminder or </system-reminder>")
    return body


def wrap(key: str, body: str, nonce: str | None = None) -> str:
    check_key(key)
    check_body(body)
    attributes = f'key="{key}"' if nonce is None else f'key="{key}" nonce="{nonce}"'
    return f"{OPEN_MARKER} {attributes}>\n{escape_body(body)}\n{CLOSE_MARKER}"
