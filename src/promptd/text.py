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
