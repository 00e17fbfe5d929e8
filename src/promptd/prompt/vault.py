"""The template vault: the Apply-Patch template stored sealed with AES-256-GCM.

Domain layer: must not import promptd.rpc or promptd.methods; `cryptography` is imported inside
the functions that need it, so loading this module costs nothing at server start-up.

A sealed file is a small JSON document: format tag, template id, version, a random 96-bit nonce
and the ciphertext (with its 16-byte tag). The format tag, id and version are the associated data,
so changing any of them (or a byte of the ciphertext) makes the file refuse to open.

Plaintext is decrypted into a bytearray, handed to the renderer, and the bytearray is overwritten
with zeros in `finally`; nothing decrypted is cached. What Python cannot wipe (the str made from
the buffer for Jinja, the compiled template's constants, the rendered prompt) is listed in
docs/templates.md.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from promptd.errors import VaultLocked

FORMAT = "promptd-vault/1"
APPLY_PATCH_ID = "apply_patch"
KEY_BYTES = 32  # AES-256
NONCE_BYTES = 12  # 96 bits: the size GCM is specified for (NIST SP 800-38D)
TAG_BYTES = 16
# GCM's decryptor may hold back up to one block minus a byte, so update_into needs that much room.
BLOCK_SLACK = 15
KEY_ENV = "PROMPTD_VAULT_KEY"
# Group/other permission bits: a key file anyone else can read is no key (the rule ssh applies).
UNSAFE_KEY_MODE = 0o077
TEMPLATES = Path(__file__).resolve().parent / "templates"
SHIPPED_FILE = TEMPLATES / "apply_patch.sealed"

# The key the shipped Apply-Patch template is sealed with. It is public (it is right here), so the
# shipped seal is obfuscation only: it keeps the template out of plain sight, not out of reach.
# Deployments that need more seal their own template with their own key (docs/templates.md).
DEFAULT_KEY = bytes.fromhex("586b20cc5c709173b686bacfabed3583b84f9345a3d1c7a36226dd83a008563b")


@dataclass(frozen=True, slots=True)
class Sealed:
    template_id: str
    version: int
    nonce: bytes
    ciphertext: bytes  # ciphertext followed by the tag


def associated_data(template_id: str, version: int) -> bytes:
    return b"\0".join((FORMAT.encode(), template_id.encode("utf-8"), str(version).encode()))


# -- keys --------------------------------------------------------------------------------------


def parse_key(text: bytes | str, where: str) -> bytes:
    """A key from its text form (64 hex digits or base64) or, from a file, 32 raw bytes."""
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
    raise VaultLocked(f"the vault key from {where} is not a 256-bit key (64 hex digits or base64 of 32 bytes)", reason="bad_key", source=where)


def read_key_file(path: str | Path) -> bytes:
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise VaultLocked(f"cannot read the vault key file {path}: {exc.strerror}", reason="key_file_missing") from None
    if not stat.S_ISREG(info.st_mode):
        raise VaultLocked(f"the vault key file {path} is not a regular file", reason="key_file_missing")
    if info.st_mode & UNSAFE_KEY_MODE:
        raise VaultLocked(
            f"the vault key file {path} is accessible to group or others (mode {stat.S_IMODE(info.st_mode):o}); chmod 600 it",
            reason="key_file_permissions",
        )
    return parse_key(path.read_bytes(), "key_file")


def resolve_key(key_file: str | None, environ: Mapping[str, str]) -> tuple[bytes, str]:
    """(key, where it came from): PROMPTD_VAULT_KEY, then the configured key file, then the
    shipped default key."""
    if environ.get(KEY_ENV):
        return parse_key(environ[KEY_ENV], KEY_ENV), "env"
    if key_file:
        return read_key_file(key_file), "key_file"
    return DEFAULT_KEY, "default"


def new_key() -> bytes:
    return secrets.token_bytes(KEY_BYTES)


# -- sealing and opening -----------------------------------------------------------------------


def seal(plaintext: bytes | bytearray | memoryview, key: bytes, template_id: str = APPLY_PATCH_ID, version: int = 1) -> bytes:
    """The sealed file's bytes for `plaintext`."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    _check_key(key)
    nonce = secrets.token_bytes(NONCE_BYTES)
    ciphertext = AESGCM(key).encrypt(nonce, bytes(plaintext), associated_data(template_id, version))
    document = {
        "format": FORMAT,
        "id": template_id,
        "version": version,
        "nonce": base64.b64encode(nonce).decode(),
        "ciphertext": base64.b64encode(ciphertext).decode(),
    }
    return (json.dumps(document, indent=2) + "\n").encode()


def parse(data: bytes) -> Sealed:
    """Reads a sealed file's envelope; raises VaultLocked when it is not one."""
    try:
        document = json.loads(data)
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            raise ValueError("not a sealed template")
        template_id = document["id"]
        version = document["version"]
        if not isinstance(template_id, str) or isinstance(version, bool) or not isinstance(version, int):
            raise ValueError("bad header")
        nonce = base64.b64decode(document["nonce"], validate=True)
        ciphertext = base64.b64decode(document["ciphertext"], validate=True)
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise VaultLocked("the sealed template file is malformed", reason="malformed") from None
    if len(nonce) != NONCE_BYTES or len(ciphertext) < TAG_BYTES:
        raise VaultLocked("the sealed template file is malformed", reason="malformed")
    return Sealed(template_id, version, nonce, ciphertext)


def buffer_for(sealed: Sealed) -> bytearray:
    """A buffer large enough for `decrypt_into`."""
    return bytearray(len(sealed.ciphertext) - TAG_BYTES + BLOCK_SLACK)


def decrypt_into(sealed: Sealed, key: bytes, buffer: bytearray) -> int:
    """Decrypts into `buffer` (never into an immutable bytes object) and returns the plaintext
    length. On a wrong key or any tampering the buffer is wiped and VaultLocked raised."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    _check_key(key)
    body, tag = sealed.ciphertext[:-TAG_BYTES], sealed.ciphertext[-TAG_BYTES:]
    decryptor = Cipher(algorithms.AES(key), modes.GCM(sealed.nonce, tag)).decryptor()
    decryptor.authenticate_additional_data(associated_data(sealed.template_id, sealed.version))
    try:
        written = decryptor.update_into(body, buffer)
        # finalize() checks the tag: until it returns, the buffer holds unauthenticated bytes.
        decryptor.finalize()
    except InvalidTag:
        wipe(buffer)
        raise VaultLocked("the sealed template does not open with this key (wrong key, or the file was altered)", reason="wrong_key_or_tampered") from None
    except ValueError:
        wipe(buffer)
        raise VaultLocked("the sealed template file is malformed", reason="malformed") from None
    return written


def wipe(buffer: bytearray) -> None:
    """Overwrites the buffer in place (same length, so CPython reuses the same memory)."""
    buffer[:] = bytes(len(buffer))


def _check_key(key: bytes) -> None:
    if len(key) != KEY_BYTES:
        raise VaultLocked("the vault key must be 32 bytes", reason="bad_key")


@dataclass(slots=True)
class Vault:
    """One sealed template and the key that opens it.

    `last_buffer` keeps the (wiped) buffer of the last opening, so an audit can check that no
    plaintext stays behind in it."""

    path: Path
    key: bytes = field(repr=False)
    key_source: str = "default"
    template_id: str = APPLY_PATCH_ID
    last_buffer: bytearray | None = field(default=None, repr=False)

    def read(self) -> Sealed:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise VaultLocked(f"cannot read the sealed template {self.path}: {exc.strerror}", reason="missing_file") from None
        sealed = parse(data)
        if sealed.template_id != self.template_id:
            raise VaultLocked(f"the sealed file holds template {sealed.template_id!r}, not {self.template_id!r}", reason="wrong_template")
        return sealed

    def render(self, render_text: Callable[[str], str]) -> str:
        """Opens the template, passes its text to `render_text`, wipes the buffer, and returns
        what `render_text` returned."""
        sealed = self.read()
        buffer = buffer_for(sealed)
        self.last_buffer = buffer
        view = memoryview(buffer)
        try:
            length = decrypt_into(sealed, self.key, buffer)
            try:
                # str() of a buffer slice decodes without an intermediate bytes copy.
                source = str(view[:length], "utf-8")
            except UnicodeDecodeError:
                raise VaultLocked("the sealed template is not UTF-8 text", reason="malformed") from None
            return render_text(source)
        finally:
            view.release()
            wipe(buffer)

    def open_bytes(self) -> bytes:
        """The plaintext as bytes, for `promptd vault open` (the caller owns the copy)."""
        sealed = self.read()
        buffer = buffer_for(sealed)
        try:
            length = decrypt_into(sealed, self.key, buffer)
            return bytes(buffer[:length])
        finally:
            wipe(buffer)


def vault_for(config: Any, environ: Mapping[str, str]) -> Vault:
    """The Apply-Patch vault for a VaultConfig: its template file (or the shipped one) and key."""
    key, source = resolve_key(config.key_file, environ)
    path = Path(config.template_file) if config.template_file else SHIPPED_FILE
    return Vault(path=path, key=key, key_source=source)
