"""Self-verifying reminder blocks: the token a block carries proves who wrote it, for which
session, with exactly which bytes.

Domain layer: imports only the standard library. The token in a block's delimiters is

    NONCE (32 hex) + SESSION TAG (12 hex) + MAC (32 hex)

- NONCE names the key that signed: derived from it (HMAC), so it is the same in every process
  that shares a host key (`reminders.provenance_key_file`) and different in every process that
  draws its own. It is not a secret: the model reads it in every block.
- SESSION TAG = HMAC(key, session)[:6]: which session the block was written for ("" for a block
  written without one), without naming it.
- MAC = HMAC-SHA256(key, the block's exact text with the MAC left out)[:16]: any changed byte,
  anywhere in the block, fails it.

Verification recomputes the MAC from the block alone: no state grows with the blocks written, so
no request can evict another block, and a block verifies in any later process that holds the key.
A block refused says why: another key (`other_process`), a changed byte (`altered`), or another
session than the one it is checked in (`other_session`). A block may be replayed within its own
session (it says what it said); it cannot move to another.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable
from typing import NamedTuple

from promptd.reminders.kinds import Refusal

KEY_BYTES = 32
NONCE_CHARS = 32
SESSION_CHARS = 12
MAC_CHARS = 32
TOKEN_CHARS = NONCE_CHARS + SESSION_CHARS + MAC_CHARS


def _mac(key: bytes, label: bytes, data: bytes) -> str:
    return hmac.digest(key, label + b"\x00" + data, hashlib.sha256).hex()


def _bytes(text: str) -> bytes:
    # surrogatepass: JSON may carry lone surrogates, and they must hash like any other code point.
    return text.encode("utf-8", "surrogatepass")


class Signer(NamedTuple):
    """The key blocks are written with, and older keys that still verify (rotation)."""

    key: bytes
    previous: tuple[bytes, ...] = ()

    @classmethod
    def fresh(cls) -> Signer:
        """A per-process key: blocks of earlier processes are then another process's."""
        return cls(secrets.token_bytes(KEY_BYTES))

    @classmethod
    def of(cls, key: bytes, previous: Iterable[bytes] = ()) -> Signer:
        return cls(key, tuple(previous))

    @property
    def nonce(self) -> str:
        return nonce_of(self.key)

    def prefix(self, nonce: str, session: str | None) -> str:
        """A token without its MAC: the nonce, then the session's tag."""
        return nonce + session_tag(self.key, session or "")

    def token(self, unsigned: str, prefix: str) -> str:
        """The token for a block whose text, written with `prefix` in place of the token, is
        `unsigned`."""
        return prefix + _mac(self.key, b"block", _bytes(unsigned))[:MAC_CHARS]

    def verify(self, nonce: str, token: str, text: str, session: str | None) -> Refusal | None:
        """None when `text`, a block carrying `token`, was written by this signer (or one of its
        previous keys) with exactly these bytes, and, when `session` is given, for that session."""
        key = self._key_for(nonce, token)
        if key is None:
            return Refusal.OTHER_PROCESS
        if len(token) != TOKEN_CHARS:
            return Refusal.ALTERED  # this key's nonce, but no signature of it (a copied nonce)
        prefix, mac = token[:-MAC_CHARS], token[-MAC_CHARS:]
        expected = _mac(key, b"block", _bytes(text.replace(token, prefix)))[:MAC_CHARS]
        if not hmac.compare_digest(mac.encode("ascii", "replace"), expected.encode("ascii")):
            return Refusal.ALTERED
        if session is not None and not hmac.compare_digest(token[NONCE_CHARS:-MAC_CHARS].encode("ascii", "replace"), session_tag(key, session).encode("ascii")):
            return Refusal.OTHER_SESSION
        return None

    def _key_for(self, nonce: str, token: str) -> bytes | None:
        if token.startswith(nonce):
            return self.key
        for key in self.previous:
            if token.startswith(nonce_of(key)):
                return key
        return None


def nonce_of(key: bytes) -> str:
    return _mac(key, b"nonce", b"")[:NONCE_CHARS]


def session_tag(key: bytes, session: str) -> str:
    return _mac(key, b"session", _bytes(session))[:SESSION_CHARS]
