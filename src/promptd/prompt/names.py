""""Did you mean": the likeliest intended names for a misspelled one.

Domain layer, no imports of its own beyond the standard library, so the engine, the lint and the
variable listing can all use it without importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

# How alike two names must be to be offered (difflib's ratio): 0.75 pairs `is_non_interactve`
# with `is_non_interactive` and `working_dir` with `working_directory`, and `workdir` with nothing.
SIMILARITY = 0.75
MAX_SUGGESTIONS = 3


def suggest(name: Any, candidates: Iterable[Any]) -> list[str]:
    """The likeliest intended names for `name`, best first (at most three). Only names are
    compared: a number (`items[5]`) or any other key that is not a string has no suggestions, and
    candidates that are not strings are never offered."""
    if not isinstance(name, str):
        return []
    import difflib  # only when a name is misspelled, not at every start

    pool = sorted({c for c in candidates if isinstance(c, str) and c != name})
    return difflib.get_close_matches(name, pool, n=MAX_SUGGESTIONS, cutoff=SIMILARITY)
