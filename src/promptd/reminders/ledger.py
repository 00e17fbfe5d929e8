"""The ledger: which system prompts this process rendered, and the Trust the trusted path
writes with.

Domain layer: imports only the standard library and its siblings; must not import promptd.rpc or
promptd.methods.

Reminder blocks prove themselves (promptd.reminders.signing: a MAC in their own delimiters), so
they need no record here. A system prompt carries no such mark, so the prompts prompt/render
returns are recorded as an HMAC-SHA256 of their exact text under a per-process key (never
logged, never returned): history/sanitize gives such a prompt back unchanged. Bounded: past
`max_entries` the oldest entry (or, with eviction "least_recent", the one looked up least
recently) is forgotten, and a forgotten prompt is sanitized like any other system text.
Lookups and records are O(1).
"""

from __future__ import annotations

import hmac
import secrets
import threading
from collections import OrderedDict
from enum import StrEnum
from typing import NamedTuple

from promptd.reminders.kinds import Eviction
from promptd.reminders.signing import Signer

# A key as long as the hash's output (RFC 2104's recommendation for HMAC keys).
KEY_BYTES = 32


class Kind(StrEnum):
    """What a recorded text is; part of the digest, so a text recorded as one kind never
    authenticates as another."""

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

    def record(self, text: str, kind: Kind = Kind.PROMPT) -> None:
        digest = self._digest(kind, text)
        with self._lock:
            self._digests[digest] = None
            self._digests.move_to_end(digest)
            self._trim()

    def holds(self, text: str, kind: Kind = Kind.PROMPT) -> bool:
        digest = self._digest(kind, text)
        with self._lock:
            if digest not in self._digests:
                return False
            if self.eviction is Eviction.LEAST_RECENT:
                self._digests.move_to_end(digest)
            return True


# Blocks of a Trust made without a signer of its own (tests, tools) are signed with this one.
_PROCESS_SIGNER = Signer.fresh()


class Trust(NamedTuple):
    """What the trusted path writes with: the nonce blocks carry, the ledger of rendered prompts,
    and the signer whose key makes blocks verify (the host's provenance key, or this process's)."""

    nonce: str
    ledger: Ledger
    signer: Signer = _PROCESS_SIGNER
