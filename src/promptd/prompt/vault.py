"""The template vault: templates stored sealed with AES-256-GCM (the shipped Apply-Patch one, and
any a deployment seals for a slot or an id of its own: config `vault.templates`).

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
import re
import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from promptd import files, keyfile
from promptd.childenv import VAULT_KEY_ENV as KEY_ENV
from promptd.errors import VaultLocked
from promptd.prompt import TEMPLATES
from promptd.prompt.kinds import TemplateName

FORMAT = "promptd-vault/1"
APPLY_PATCH_ID = TemplateName.APPLY_PATCH.value
KEY_BYTES = keyfile.KEY_BYTES  # AES-256
NONCE_BYTES = 12  # 96 bits: the size GCM is specified for (NIST SP 800-38D)
TAG_BYTES = 16
# GCM's decryptor may hold back up to one block minus a byte, so update_into needs that much room.
BLOCK_SLACK = 15
SHIPPED_FILE = TEMPLATES / "apply_patch.sealed"

# The key the shipped Apply-Patch template is sealed with. It is public (it is right here), so the
# shipped seal is obfuscation only: it keeps the template out of plain sight, not out of reach.
# Deployments that need more seal their own template with their own key (docs/templates.md).
DEFAULT_KEY = bytes.fromhex("586b20cc5c709173b686bacfabed3583b84f9345a3d1c7a36226dd83a008563b")


class Sealed(NamedTuple):
    template_id: str
    version: int
    nonce: bytes
    ciphertext: bytes  # ciphertext followed by the tag


def associated_data(template_id: str, version: int) -> bytes:
    return b"\0".join((FORMAT.encode(), template_id.encode("utf-8"), str(version).encode()))


# -- keys --------------------------------------------------------------------------------------


def parse_key(text: bytes | str, where: str) -> bytes:
    """A key from its text form (64 hex digits or base64) or, from a file, 32 raw bytes."""
    key = keyfile.parse_key(text)
    if key is None:
        raise VaultLocked(f"the vault key from {where} is not a 256-bit key (64 hex digits or base64 of 32 bytes)", reason="bad_key", source=where)
    return key


def read_key_file(path: str | Path) -> bytes:
    """The key in a key file, read by promptd.keyfile's rule (the safe-read rule, docs/security.md
    "Safe reads", and owner-only permissions). A relative path is relative to promptd's working
    directory."""
    path = Path(path).expanduser()
    where = {"key_source": "key_file", "key_where": str(path)}
    try:
        return keyfile.read_key_file(path)
    except keyfile.KeyFileError as exc:
        if exc.reason == "missing":
            raise VaultLocked(f"cannot read the vault key file {path}: {exc.detail}", reason="key_file_missing", **where) from None
        if exc.reason == "permissions":
            raise VaultLocked(f"the vault key file {exc.detail}", reason="key_file_permissions", **where) from None
        if exc.reason == "unsafe":
            raise VaultLocked(f"the vault key file {exc.detail}", reason="key_file_unsafe", refusal=exc.refusal, **where) from None
        raise VaultLocked(f"the vault key from the key file {path} is not a 256-bit key (64 hex digits or base64 of 32 bytes)", reason="bad_key", source=f"the key file {path}") from None


@dataclass(frozen=True, slots=True)
class KeyChoice:
    """The vault key and where it came from: `source` is env, key_file or default (the shipped
    key); `where` names it for a person (the variable, the file's path, "the shipped key"). Only
    `source` and `where` are ever logged or put in an error."""

    key: bytes = field(repr=False)
    source: str
    where: str

    def describe(self) -> dict[str, str]:
        return {"key_source": self.source, "key_where": self.where}


SHIPPED_KEY_WHERE = "the shipped key"


def own_templates(config: Any) -> dict[str, str]:
    """Template id -> sealed file the configuration names (`vault.templates`, and
    `vault.template_file` as the Apply-Patch one)."""
    files = dict(getattr(config, "templates", None) or {})
    if config.template_file:
        files.setdefault(APPLY_PATCH_ID, config.template_file)
    # "~/..." in promptd.toml means the home folder, as it would in a shell.
    return {template_id: str(Path(path).expanduser()) for template_id, path in files.items()}


def choose_key(config: Any, environ: Mapping[str, str]) -> KeyChoice:
    """The key for the configuration's `vault.key_source` (docs/templates.md, "Keys"):

    - `env`: PROMPTD_VAULT_KEY, which must be set;
    - `key_file`: the file `vault.key_file`, which must be configured and private;
    - `shipped`: the public shipped key;
    - `auto` (the default): PROMPTD_VAULT_KEY if set, else `vault.key_file` if configured, else
      the shipped key, but only while no template of your own is configured: once one is, a
      missing key is an error naming what was tried, never a silent fall back to a public key.
    """
    source = getattr(config, "key_source", "auto")
    if source == "shipped":
        return KeyChoice(DEFAULT_KEY, "default", SHIPPED_KEY_WHERE)
    if source in ("env", "auto") and environ.get(KEY_ENV):
        return KeyChoice(parse_key(environ[KEY_ENV], KEY_ENV), "env", KEY_ENV)
    if source == "env":
        raise VaultLocked(f"vault.key_source is env but {KEY_ENV} is not set", reason="key_missing", key_source="env", key_where=KEY_ENV)
    if config.key_file:
        return KeyChoice(read_key_file(config.key_file), "key_file", str(config.key_file))
    if source == "key_file":
        raise VaultLocked("vault.key_source is key_file but vault.key_file is not configured", reason="key_missing", key_source="key_file")
    mine = own_templates(config)
    if mine:
        raise VaultLocked(
            f"no vault key for the sealed templates you configured ({', '.join(sorted(mine))}): {KEY_ENV} is not set and vault.key_file is not "
            'configured (set one, or vault.key_source = "shipped" for files sealed with the public shipped key)',
            reason="key_missing",
            key_source="auto",
        )
    return KeyChoice(DEFAULT_KEY, "default", SHIPPED_KEY_WHERE)


new_key = keyfile.new_key


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
    """One sealed template and the key that opens it."""

    path: Path
    key: bytes = field(repr=False)
    key_source: str = "default"
    template_id: str = APPLY_PATCH_ID
    key_where: str = SHIPPED_KEY_WHERE

    def _decrypt(self, sealed: Sealed, buffer: bytearray) -> int:
        try:
            return decrypt_into(sealed, self.key, buffer)
        except VaultLocked as exc:
            # Which key was tried is what a person needs to fix a wrong key; never the key.
            exc.message = f"{exc.message}; key from {self.key_where}"
            exc.args = (exc.message,)
            exc.data.update(key_source=self.key_source, key_where=self.key_where)
            raise

    def read(self) -> Sealed:
        # The named-file rule: a sealed file's contents are authenticated by the key, so a link
        # cannot change what renders, but a FIFO or /dev/zero in its place would hang or exhaust
        # the render (docs/security.md, "Safe reads").
        try:
            data = files.read_named(self.path)
        except files.Refused as exc:
            if exc.reason in (files.Refusal.MISSING, files.Refusal.DIRECTORY, files.Refusal.UNREADABLE):
                raise VaultLocked(f"cannot read the sealed template {self.path}: {exc.detail}", reason="missing_file", template_id=self.template_id) from None
            raise VaultLocked(f"the sealed template {self.path} is refused: {exc.detail}", reason="unsafe_file", refusal=exc.reason.value, template_id=self.template_id) from None
        sealed = parse(data)
        # An empty template_id accepts any (`promptd vault open` / `verify` without --id).
        if self.template_id and sealed.template_id != self.template_id:
            raise VaultLocked(f"the sealed file holds template {sealed.template_id!r}, not {self.template_id!r}", reason="wrong_template")
        return sealed

    @contextmanager
    def opened(self) -> Iterator[str]:
        """The template's text, for the `with` block alone: the buffer it was decrypted into is
        wiped when the block ends, however it ends."""
        sealed = self.read()
        buffer = buffer_for(sealed)
        view = memoryview(buffer)
        try:
            length = self._decrypt(sealed, buffer)
            try:
                # str() of a buffer slice decodes without an intermediate bytes copy.
                source = str(view[:length], "utf-8")
            except UnicodeDecodeError:
                raise VaultLocked("the sealed template is not UTF-8 text", reason="malformed") from None
            yield source
        finally:
            view.release()
            wipe(buffer)

    def open_bytes(self) -> bytes:
        """The plaintext as bytes, for `promptd vault open` (the caller owns the copy)."""
        sealed = self.read()
        buffer = buffer_for(sealed)
        try:
            length = self._decrypt(sealed, buffer)
            return bytes(buffer[:length])
        finally:
            wipe(buffer)


def vault_for(config: Any, environ: Mapping[str, str], template_id: str = APPLY_PATCH_ID) -> Vault | None:
    """The vault of one template id for a VaultConfig: the sealed file configured for it (the
    shipped one for Apply-Patch), opened with the configured key; None when no sealed file is
    configured for that id (the shipped plain template is used then)."""
    path = own_templates(config).get(template_id)
    if path is None:
        if template_id != APPLY_PATCH_ID:
            return None
        path = str(SHIPPED_FILE)
    choice = choose_key(config, environ)
    return Vault(path=Path(path), key=choice.key, key_source=choice.source, template_id=template_id, key_where=choice.where)


def startup_report(config: Any, environ: Mapping[str, str]) -> dict[str, Any]:
    """Checks the vault configuration the way a render would, before anything is served: the key
    (a configured key file that is missing, unreadable, readable by others or not a key; a key
    variable that `key_source = "env"` requires) and every configured sealed file's presence.
    Returns the metadata to log (key source kind and where, template ids); raises VaultLocked."""
    choice = choose_key(config, environ)
    mine = own_templates(config)
    for template_id, path in sorted(mine.items()):
        if not Path(path).is_file():
            raise VaultLocked(f"the sealed template file {path} for {template_id!r} does not exist", reason="missing_file", template_id=template_id)
    return {**choice.describe(), "templates": sorted(mine)}


def is_envelope(text: str | bytes) -> bool:
    """True when `text` is a sealed file's envelope rather than template text."""
    head = text[:200] if isinstance(text, str) else text[:200].decode("utf-8", "replace")
    return head.lstrip().startswith("{") and FORMAT in head


# The format member of an envelope: `seal` writes it first, and a hand-edited envelope that puts
# the id and version first still has it within its head (an id is at most 64 characters).
_FORMAT_MEMBER = re.compile(r'"format"\s*:\s*"' + re.escape(FORMAT) + '"')
ENVELOPE_HEAD_CHARS = 1024


def has_envelope_head(text: str) -> bool:
    """True when `text` opens as a sealed file's envelope: a JSON object with the format tag
    among its first members. A bounded look at the leading characters, never a parse: what is
    asked about may be anyone's text (prompt/lint's), and parsing untrusted JSON in promptd's own
    process would cost what the text asks for (deep nesting, millions of members)."""
    head = text[:ENVELOPE_HEAD_CHARS]
    return head.lstrip().startswith("{") and _FORMAT_MEMBER.search(head) is not None
