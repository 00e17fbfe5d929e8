"""The reserved-key registry: a data file shipped in the package, plus keys a host adds.

The table in docs/reminder-keys.md is generated from the same file (`make docs`).
"""

from __future__ import annotations

import json
import os
from functools import cache
from typing import NamedTuple

from promptd.errors import UnregisteredKey
from promptd.reminders.keyed import check_key


class KeyInfo(NamedTuple):
    key: str
    purpose: str
    introduced_in: str


@cache
def reserved() -> tuple[KeyInfo, ...]:
    # Read beside this module (as the shipped templates are): importlib.resources would add its
    # import to every start for one file that is always on disk.
    with open(os.path.join(os.path.dirname(__file__), "keys.json"), encoding="utf-8") as handle:
        raw = json.load(handle)
    return tuple(KeyInfo(**entry) for entry in raw)


class KeyRegistry:
    """Reserved keys first, then the host's own, in the order they were added."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self._entries: dict[str, KeyInfo] = {info.key: info for info in reserved()}

    def add(self, key: str, purpose: str, introduced_in: str = "host") -> None:
        check_key(key)
        if key not in self._entries:
            self._entries[key] = KeyInfo(key, purpose, introduced_in)

    def entries(self) -> list[KeyInfo]:
        return list(self._entries.values())

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def require(self, key: str) -> str:
        """Checks the key's form, and under `keys.strict` that it is registered."""
        check_key(key)
        if self.strict and key not in self._entries:
            raise UnregisteredKey("reminder key is not registered (keys.strict is on)", key=key)
        return key
