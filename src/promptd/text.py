"""Small plain-text helpers shared by domain modules.

Domain layer: imports nothing from promptd, so any module may use it.
"""

from __future__ import annotations

ELLIPSIS = "…"


def one_line(text: str, limit: int) -> str:
    """`text` as a single line: every run of whitespace (line breaks included) becomes one space,
    and a line longer than `limit` characters is cut to `limit`, its last character an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + ELLIPSIS


def has_astral(text: str) -> bool:
    """Whether `text` holds a character beyond the Basic Multilingual Plane. Much faster than a
    regular expression: ASCII is known without a look, and the UTF-16 encoding of other text is a
    near-copy whose length tells."""
    return not text.isascii() and len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text)
