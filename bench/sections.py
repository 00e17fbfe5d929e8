"""Benchmark sections beyond the core: each is a function returning Markdown lines."""

from __future__ import annotations

from typing import Callable

# The core's cheap method (reminder/wrap) p50 in seconds, filled in by the core section.
CHEAP_P50: dict[str, float] = {"value": 0.0}

ALL: list[Callable[[], list[str]]] = []
