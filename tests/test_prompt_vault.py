"""The template vault: AES-256-GCM seal and open, keys and key files, tampering, and no plaintext
left behind after a render."""

from __future__ import annotations

import base64
import json
import os

import pytest

from promptd.config import VaultConfig
from promptd.errors import VaultLocked
from promptd.prompt import vault
from promptd.prompt.context import parse_context
from promptd.prompt.engine import engine
from promptd.prompt.pipeline import render, shipped_source

SOURCE = (vault.TEMPLATES / "unsealed" / "apply_patch.jinja").read_bytes()
# A phrase of the Apply-Patch template's text that no other template contains.
MARKER = "a coding agent that changes files by writing patches"


def test_the_shipped_sealed_file_opens_to_the_unsealed_source_with_the_default_key():
    assert vault.Vault(vault.SHIPPED_FILE, vault.DEFAULT_KEY).open_bytes() == SOURCE


def test_the_shipped_file_holds_no_plaintext():
    sealed = vault.SHIPPED_FILE.read_bytes()
    assert MARKER.encode() not in sealed and b"Begin Patch" not in sealed


def test_seal_then_open_round_trips_with_a_fresh_nonce_each_time():
    key = vault.new_key()
    first, second = vault.seal(b"hello ${{ os_name }}", key), vault.seal(b"hello ${{ os_name }}", key)
    assert json.loads(first)["nonce"] != json.loads(second)["nonce"]
    for data in (first, second):
        sealed = vault.parse(data)
        buffer = vault.buffer_for(sealed)
        length = vault.decrypt_into(sealed, key, buffer)
        assert bytes(buffer[:length]) == b"hello ${{ os_name }}"
        assert len(sealed.nonce) == 12


def test_a_wrong_key_is_vault_locked_and_leaves_the_buffer_wiped():
    sealed = vault.parse(vault.seal(b"secret text", vault.new_key()))
    buffer = vault.buffer_for(sealed)
    with pytest.raises(VaultLocked) as caught:
        vault.decrypt_into(sealed, vault.new_key(), buffer)
    assert caught.value.kind == "vault_locked" and caught.value.data["reason"] == "wrong_key_or_tampered"
    assert not any(buffer)


def _tamper(data: bytes, **changes) -> bytes:
    document = json.loads(data)
    document.update(changes)
    return json.dumps(document).encode()


def test_tampering_with_ciphertext_nonce_id_or_version_is_detected():
    key = vault.new_key()
    data = vault.seal(b"the template", key)
    document = json.loads(data)
    flipped = bytearray(base64.b64decode(document["ciphertext"]))
    flipped[0] ^= 1
    nonce = bytearray(base64.b64decode(document["nonce"]))
    nonce[0] ^= 1
    for bad in (
        _tamper(data, ciphertext=base64.b64encode(bytes(flipped)).decode()),
        _tamper(data, nonce=base64.b64encode(bytes(nonce)).decode()),
        _tamper(data, id="other"),
        _tamper(data, version=2),
    ):
        sealed = vault.parse(bad)
        with pytest.raises(VaultLocked) as caught:
            vault.decrypt_into(sealed, key, vault.buffer_for(sealed))
        assert caught.value.data["reason"] == "wrong_key_or_tampered"


@pytest.mark.parametrize("data", [b"", b"not json", b"[]", b'{"format": "other"}', _tamper(vault.seal(b"x", vault.DEFAULT_KEY), nonce="AAAA")])
def test_a_malformed_sealed_file_is_vault_locked(data):
    with pytest.raises(VaultLocked) as caught:
        vault.parse(data)
    assert caught.value.data["reason"] == "malformed"


def test_a_file_sealed_for_another_template_id_is_refused_for_apply_patch(tmp_path):
    path = tmp_path / "other.sealed"
    path.write_bytes(vault.seal(b"x", vault.DEFAULT_KEY, template_id="other"))
    with pytest.raises(VaultLocked) as caught:
        vault.Vault(path, vault.DEFAULT_KEY).open_bytes()
    assert caught.value.data["reason"] == "wrong_template"


def test_keys_are_read_as_hex_base64_or_raw_bytes():
    key = vault.new_key()
    assert vault.parse_key(key.hex(), "env") == key
    assert vault.parse_key(base64.b64encode(key).decode() + "\n", "env") == key
    assert vault.parse_key(base64.urlsafe_b64encode(key).decode().rstrip("="), "env") == key
    assert vault.parse_key(key, "key_file") == key
    for bad in ("", "abc", "00" * 31, base64.b64encode(b"x" * 16).decode()):
        with pytest.raises(VaultLocked):
            vault.parse_key(bad, "env")


def test_the_key_comes_from_the_environment_then_the_key_file_then_the_default(tmp_path):
    env_key, file_key = vault.new_key(), vault.new_key()
    key_file = tmp_path / "vault.key"
    key_file.write_text(file_key.hex())
    key_file.chmod(0o600)
    assert vault.resolve_key(str(key_file), {vault.KEY_ENV: env_key.hex()}) == (env_key, "env")
    assert vault.resolve_key(str(key_file), {}) == (file_key, "key_file")
    assert vault.resolve_key(None, {}) == (vault.DEFAULT_KEY, "default")


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644])
def test_a_key_file_others_can_read_is_refused(tmp_path, mode):
    key_file = tmp_path / "vault.key"
    key_file.write_text(vault.new_key().hex())
    key_file.chmod(mode)
    with pytest.raises(VaultLocked) as caught:
        vault.read_key_file(key_file)
    assert caught.value.data["reason"] == "key_file_permissions"


def test_a_missing_key_file_is_vault_locked(tmp_path):
    with pytest.raises(VaultLocked):
        vault.read_key_file(tmp_path / "absent.key")


def test_a_users_own_sealed_template_and_key_are_used_for_the_codex_override(tmp_path):
    key = vault.new_key()
    key_file = tmp_path / "k"
    key_file.write_text(key.hex())
    key_file.chmod(0o600)
    template = tmp_path / "mine.sealed"
    template.write_bytes(vault.seal(b"My patch rules for ${{ system_prompt_label }}.", key))
    config = VaultConfig(key_file=str(key_file), template_file=str(template))
    result = render(parse_context({"system_prompt": "codex"}), {}, open_vault=lambda _id: vault.vault_for(config, {}))
    assert result.text == "My patch rules for Grok." and result.template == "apply_patch"
    with pytest.raises(VaultLocked):
        render(parse_context({"system_prompt": "codex"}), {}, open_vault=lambda _id: vault.vault_for(config, {vault.KEY_ENV: vault.new_key().hex()}))


def test_after_an_apply_patch_render_no_plaintext_remains_in_the_vault_buffer_or_the_compile_cache():
    # What this can and cannot show: the vault's own buffer is wiped and the engine caches neither
    # the source nor the compiled template. The str handed to Jinja, the compiled code's constants
    # and the rendered prompt are ordinary Python objects that are freed, not wiped (see
    # docs/templates.md); the rendered prompt is the result the caller asked for.
    render(parse_context({}), {"read": "r"})  # a cacheable render, so the cache is not trivially empty
    opened = vault.Vault(vault.SHIPPED_FILE, vault.DEFAULT_KEY)
    result = render(parse_context({"system_prompt": "codex"}), {"patch": "apply_patch"}, open_vault=lambda _id: opened)
    assert MARKER in result.text
    buffer = opened.last_buffer
    assert buffer is not None and len(buffer) >= len(SOURCE) and not any(buffer)
    cached = engine().cached_sources()
    assert shipped_source("primary") in cached
    assert all(MARKER not in source and "Begin Patch" not in source for source in cached)
    for template in engine().cached_templates():
        constants = [c for c in template.root_render_func.__code__.co_consts if isinstance(c, str)]
        assert not any("Begin Patch" in c or MARKER in c for c in constants)


def test_a_failing_apply_patch_render_still_wipes_the_buffer(tmp_path):
    path = tmp_path / "broken.sealed"
    path.write_bytes(vault.seal(b"secret words ${% if %}", vault.DEFAULT_KEY))
    opened = vault.Vault(path, vault.DEFAULT_KEY)
    from promptd.errors import TemplateSyntax

    with pytest.raises(TemplateSyntax) as caught:
        render(parse_context({"system_prompt": "codex"}), {}, open_vault=lambda _id: opened)
    assert caught.value.data["template"] == "apply_patch"
    assert not any(opened.last_buffer)
    assert all("secret words" not in source for source in engine().cached_sources())


def test_cold_modules_do_not_import_jinja_or_cryptography():
    import subprocess
    import sys

    code = "import sys, promptd.methods, promptd.cli, promptd.prompt.vault; print(sorted(m for m in ('jinja2', 'cryptography', 'yaml') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ))
    assert out.stdout.strip() == "[]"
