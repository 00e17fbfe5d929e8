"""A trusted path for in-process tests: a nonce and a ledger of the blocks written with it."""

from __future__ import annotations

from promptd.reminders.ledger import Ledger, Trust


def make_trust(nonce: str, max_entries: int = 4096) -> Trust:
    return Trust(nonce, Ledger(max_entries))
