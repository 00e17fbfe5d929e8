"""Secret keys kept in files: the one reading of a 256-bit key a host keeps (the vault key, the
provenance key).

Base layer: imports only the standard library and promptd.files. A key file is read by the
safe-read rule (no symlink: whoever can change a link chooses the key; a regular file of
promptd's own user or root), must be readable by its owner alone, and holds 64 hex digits, base64
of 32 bytes, or the 32 raw bytes. Callers turn a KeyFileError into their own error; its
`reason` is stable, its text never holds the key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
import stat
from pathlib import Path

from promptd import files

KEY_BYTES = 32
# Group or others may do anything with it: refused (what `chmod 600` fixes).
UNSAFE_MODE = 0o077
# A key's text form is under 100 bytes; a larger file is not a key file.
MAX_BYTES = 4096


class KeyFileError(Exception):
    def __init__(self, reason: str, detail: str, mode: int | None = None, refusal: str | None = None) -> None:
        super().__init__(detail)
        self.reason = reason  # missing | permissions | unsafe | bad_key
        self.detail = detail
        self.mode = mode
        self.refusal = refusal


def parse_key(text: bytes | str) -> bytes | None:
    """A key from its text form (64 hex digits or base64) or, from a file, 32 raw bytes; None
    when it is neither."""
    if isinstance(text, bytes) and len(text) == KEY_BYTES:
        # Exactly 32 bytes can only be a raw key: the text forms are 64 (hex) or 43-44 (base64).
        return text
    raw = text.encode("utf-8", "replace") if isinstance(text, str) else text
    stripped = raw.strip()
    try:
        if len(stripped) == 2 * KEY_BYTES:
            return bytes.fromhex(stripped.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        pass
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            key = decode(stripped + b"=" * (-len(stripped) % 4))
        except (binascii.Error, ValueError):
            continue
        if len(key) == KEY_BYTES:
            return key
    return None


# ---- keys no child process may get ------------------------------------------------------------

# Digests of the keys this process holds (never the keys: a second copy is one more to leak). A
# child process (promptd.childenv) never gets a variable whose value reads as one of them.
_WITHHELD: set[bytes] = set()
_DIGEST_DOMAIN = b"promptd withheld key\0"


def key_digest(key: bytes) -> bytes:
    return hashlib.sha256(_DIGEST_DOMAIN + key).digest()


def withhold(key: bytes) -> None:
    """Registers a key promptd holds (read from a key file, from PROMPTD_VAULT_KEY, the
    provenance key): from now on no child process gets a variable holding it in any form."""
    _WITHHELD.add(key_digest(key))


def withheld() -> frozenset[bytes]:
    """The digests of the keys registered with withhold."""
    return frozenset(_WITHHELD)


def keys_in(value: str | bytes) -> list[bytes]:
    """What `value` holds when read as a key, in each form a key is written (parse_key: 64 hex
    digits in either case, base64, 32 raw bytes; surrounding whitespace ignored): at most two
    candidates, or none."""
    raw = os.fsencode(value) if isinstance(value, str) else value
    found = []
    for text in (raw, raw.strip()):
        key = parse_key(text)
        if key is not None and key not in found:
            found.append(key)
    return found


def holds_key(value: str | bytes, digests: frozenset[bytes] | set[bytes]) -> bool:
    """Whether `value`, read as a key, is one of the keys whose digests are given."""
    return bool(digests) and any(key_digest(key) in digests for key in keys_in(value))


def read_key_file(path: str | Path) -> bytes:
    """The key in `path` (relative paths from promptd's working directory); raises KeyFileError."""
    path = Path(path).expanduser()
    try:
        with files.open_safe(path, root=".") as opened:
            if opened.stat.st_mode & UNSAFE_MODE:
                raise KeyFileError("permissions", f"{path} is accessible to group or others (mode {stat.S_IMODE(opened.stat.st_mode):o}); chmod 600 it", mode=opened.stat.st_mode)
            data = files.read_fd(opened, MAX_BYTES)
    except files.Refused as exc:
        raise _refused(path, exc) from None
    key = parse_key(data)
    if key is None:
        raise KeyFileError("bad_key", f"{path} does not hold a 256-bit key (64 hex digits or base64 of 32 bytes)")
    withhold(key)  # the key a file holds is never a child's, whatever variable it is copied to
    return key


def _refused(path: Path, exc: files.Refused) -> KeyFileError:
    if exc.reason in (files.Refusal.MISSING, files.Refusal.DIRECTORY, files.Refusal.UNREADABLE):
        return KeyFileError("missing", f"cannot read {path}: {exc.detail}")
    if exc.reason is files.Refusal.PERMISSIONS:
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            mode = stat.S_IWGRP | stat.S_IWOTH
        return KeyFileError("permissions", f"{path} is accessible to group or others (mode {stat.S_IMODE(mode):o}); chmod 600 it", mode=mode)
    return KeyFileError("unsafe", f"{path} is refused ({exc.detail}): a key file must be a regular file of your own, named itself, not through a link", refusal=exc.reason.value)


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)
