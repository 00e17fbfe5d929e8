"""The ledger: which exact texts this process wrote through its trusted path.

Domain layer: imports only the standard library; must not import promptd.rpc or promptd.methods.

The nonce says "this looks like a runtime block of this process", but a model can read it and
repeat it, so it proves nothing alone. The ledger binds trust to content: every block the trusted
path writes is recorded as an HMAC-SHA256 of its exact bytes under a per-process key (from
`secrets`, never logged, never returned), and a block authenticates only when its digest is
here. A copied nonce on an altered or invented body therefore never authenticates.

Bounded: past `max_entries` the oldest entry (or, with eviction "least_recent", the one looked up
least recently) is forgotten, and a block that was forgotten fails closed: it reads as altered.
Lookups and records are O(1).
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict
from typing import NamedTuple
from enum import StrEnum

from promptd.reminders.kinds import Eviction

# A key as long as the hash's output (RFC 2104's recommendation for HMAC keys).
KEY_BYTES = 32


class Kind(StrEnum):
    """What a recorded text is; part of the digest, so a text recorded as one kind never
    authenticates as another."""

    BLOCK = "block"  # a reminder block the trusted wrapper wrote
    PROMPT = "prompt"  # a system prompt prompt/render returned


class Ledger:
    def __init__(self, max_entries: int, eviction: Eviction | str = Eviction.OLDEST) -> None:
        self._key = secrets.token_bytes(KEY_BYTES)
        self._digests: OrderedDict[bytes, None] = OrderedDict()
        # Blocks are written from worker threads too (large assemblies run off the event loop).
        self._lock = threading.Lock()
        self.configure(max_entries, eviction)

    def configure(self, max_entries: int, eviction: Eviction | str) -> None:
        """Sets the bound and the eviction order; entries past a smaller bound are forgotten."""
        if max_entries < 1:
            raise ValueError("a ledger holds at least one entry")
        with self._lock:
            self.max_entries = max_entries
            self.eviction = Eviction(eviction)
            self._trim()

    def _trim(self) -> None:
        while len(self._digests) > self.max_entries:
            self._digests.popitem(last=False)

    def __len__(self) -> int:
        return len(self._digests)

    def _digest(self, kind: Kind, text: str) -> bytes:
        # surrogatepass: JSON may carry lone surrogates, and they must hash like any other code point.
        return hmac.digest(self._key, kind.value.encode() + b"\x00" + text.encode("utf-8", "surrogatepass"), "sha256")

    def record(self, text: str, kind: Kind = Kind.BLOCK) -> None:
        digest = self._digest(kind, text)
        with self._lock:
            self._digests[digest] = None
            self._digests.move_to_end(digest)
            self._trim()

    def holds(self, text: str, kind: Kind = Kind.BLOCK) -> bool:
        digest = self._digest(kind, text)
        with self._lock:
            if digest not in self._digests:
                return False
            if self.eviction is Eviction.LEAST_RECENT:
                self._digests.move_to_end(digest)
            return True


class Trust(NamedTuple):
    """What the trusted path writes with: this process's nonce and its ledger."""

    nonce: str
    ledger: Ledger
