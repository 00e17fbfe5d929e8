""" "Did you mean": the likeliest intended names for a misspelled one.

Domain layer. The helper itself lives at the base (promptd.text.suggest), where the configuration
and the command line can reach it too; the engine, the lint and the variable listing import it
from here.
"""

from __future__ import annotations

from promptd.text import MAX_SUGGESTIONS, SIMILARITY, suggest

__all__ = ["MAX_SUGGESTIONS", "SIMILARITY", "suggest"]
