"""The template vault: AES-256-GCM seal and open, keys and key files, tampering, and no plaintext
left behind after a render."""

from __future__ import annotations

import base64
import json
import os

import pytest
from conftest import run_cli
from support.reachable import strings_reachable_from
from support.rendering import render

from promptd.config import VaultConfig
from promptd.errors import VaultLocked
from promptd.prompt import vault
from promptd.prompt.context import parse_context
from promptd.prompt.engine import engine
from promptd.prompt.pipeline import shipped_source

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
    result = render(parse_context({"system_prompt": "codex"}), {}, vault=config)
    assert result.text == "My patch rules for Grok." and result.template == "apply_patch"
    with pytest.raises(VaultLocked):
        render(parse_context({"system_prompt": "codex"}), {}, vault=config, environ={vault.KEY_ENV: vault.new_key().hex()})


@pytest.fixture
def buffers(monkeypatch) -> list[bytearray]:
    """Every buffer the vault decrypts into, kept after the render it served."""
    allocated: list[bytearray] = []
    allocate = vault.buffer_for

    def kept(sealed):
        allocated.append(allocate(sealed))
        return allocated[-1]

    monkeypatch.setattr(vault, "buffer_for", kept)
    return allocated


def _engine_holds(*phrases: str) -> bool:
    return any(phrase in text for text in strings_reachable_from(engine()) for phrase in phrases)


def test_after_an_apply_patch_render_no_plaintext_remains_in_the_vault_buffer_or_the_compile_cache(buffers):
    # What this can and cannot show: the vault's own buffer is wiped and the engine keeps neither
    # the source nor the compiled template. The str handed to Jinja, the compiled code's constants
    # and the rendered prompt are ordinary Python objects that are freed, not wiped (see
    # docs/templates.md); the rendered prompt is the result the caller asked for.
    cached = render(parse_context({"system_prompt": {"custom": "Kept in the cache, ${{ os_name }}."}}), {})
    render(parse_context({}), {"read": "r"})  # a shipped render: its source and code stay cached
    assert cached.text == "Kept in the cache, ." and _engine_holds("Kept in the cache", shipped_source("primary")[:80])
    result = render(parse_context({"system_prompt": "codex"}), {"patch": "apply_patch"})
    assert MARKER in result.text
    assert len(buffers) == 1 and len(buffers[0]) >= len(SOURCE) and not any(buffers[0])
    assert not _engine_holds(MARKER, "Begin Patch")


def test_a_failing_apply_patch_render_still_wipes_the_buffer(tmp_path, buffers):
    path = tmp_path / "broken.sealed"
    path.write_bytes(vault.seal(b"secret words ${% if %}", vault.DEFAULT_KEY))
    from promptd.errors import TemplateSyntax

    with pytest.raises(TemplateSyntax) as caught:
        render(parse_context({"system_prompt": "codex"}), {}, vault=VaultConfig(key_source="shipped", template_file=str(path)))
    assert caught.value.data["template"] == "apply_patch"
    assert len(buffers) == 1 and not any(buffers[0])
    assert not _engine_holds("secret words")


def test_cold_modules_do_not_import_jinja_or_cryptography():
    import subprocess
    import sys

    code = "import sys, promptd.methods, promptd.cli, promptd.prompt.vault; print(sorted(m for m in ('jinja2', 'cryptography', 'yaml') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=dict(os.environ))
    assert out.stdout.strip() == "[]"


# -- keys: the source chosen, named, and never silently the shipped one ---------------------------


def _key_file(tmp_path, key: bytes, name: str = "vault.key"):
    path = tmp_path / name
    path.write_text(key.hex())
    path.chmod(0o600)
    return path


def test_auto_takes_the_variable_then_the_key_file_then_the_shipped_key(tmp_path):
    env_key, file_key = vault.new_key(), vault.new_key()
    key_file = _key_file(tmp_path, file_key)
    choice = vault.choose_key(VaultConfig(key_file=str(key_file)), {vault.KEY_ENV: env_key.hex()})
    assert (choice.key, choice.source, choice.where) == (env_key, "env", vault.KEY_ENV)
    choice = vault.choose_key(VaultConfig(key_file=str(key_file)), {})
    assert (choice.key, choice.source, choice.where) == (file_key, "key_file", str(key_file))
    choice = vault.choose_key(VaultConfig(), {})
    assert (choice.key, choice.source) == (vault.DEFAULT_KEY, "default")
    assert vault.DEFAULT_KEY.hex() not in repr(choice) and repr(vault.DEFAULT_KEY) not in repr(choice)


def test_a_configured_key_never_falls_back_to_the_shipped_key(tmp_path):
    with pytest.raises(VaultLocked) as caught:
        vault.choose_key(VaultConfig(key_source="env"), {})
    assert caught.value.data["reason"] == "key_missing" and vault.KEY_ENV in caught.value.message
    with pytest.raises(VaultLocked) as caught:
        vault.choose_key(VaultConfig(key_source="key_file"), {})
    assert caught.value.data["reason"] == "key_missing" and "vault.key_file" in caught.value.message
    with pytest.raises(VaultLocked) as caught:
        vault.choose_key(VaultConfig(key_file=str(tmp_path / "gone.key")), {})
    assert caught.value.data["reason"] == "key_file_missing" and str(tmp_path / "gone.key") in caught.value.message
    # Own sealed templates and no key at all: an error naming what was tried.
    with pytest.raises(VaultLocked) as caught:
        vault.choose_key(VaultConfig(templates={"primary": "p.sealed"}), {})
    assert caught.value.data["reason"] == "key_missing" and vault.KEY_ENV in caught.value.message and "vault.key_file" in caught.value.message
    shipped = vault.choose_key(VaultConfig(templates={"primary": "p.sealed"}, key_source="shipped"), {vault.KEY_ENV: vault.new_key().hex()})
    assert shipped.key == vault.DEFAULT_KEY and shipped.source == "default"


def test_a_wrong_key_error_names_the_key_source_tried_and_never_the_key(tmp_path):
    env_key = vault.new_key()
    opened = vault.vault_for(VaultConfig(), {vault.KEY_ENV: env_key.hex()})
    with pytest.raises(VaultLocked) as caught:
        opened.open_bytes()
    assert vault.KEY_ENV in caught.value.message and caught.value.data["key_source"] == "env"
    assert env_key.hex() not in caught.value.message and env_key.hex() not in json.dumps(caught.value.data)
    key_file = _key_file(tmp_path, vault.new_key())
    with pytest.raises(VaultLocked) as caught:
        vault.vault_for(VaultConfig(key_file=str(key_file)), {}).open_bytes()
    assert str(key_file) in caught.value.message and caught.value.data["key_where"] == str(key_file)


# -- any slot: primary, subagent, apply_patch and ids of one's own --------------------------------


def _sealed_config(tmp_path, templates: dict[str, bytes]) -> tuple[VaultConfig, bytes]:
    key = vault.new_key()
    key_file = _key_file(tmp_path, key)
    files = {}
    for template_id, text in templates.items():
        path = tmp_path / f"{template_id}.sealed"
        path.write_bytes(vault.seal(text, key, template_id))
        files[template_id] = str(path)
    return VaultConfig(key_file=str(key_file), templates=files), key


def _render_with(config: VaultConfig, context: dict, tools=None):
    return render(parse_context(context), tools or {}, vault=config)


def test_a_sealed_primary_and_subagent_replace_the_shipped_ones(tmp_path):
    config, _ = _sealed_config(tmp_path, {"primary": b"Team primary for ${{ system_prompt_label }}.", "subagent": b"Team worker: ${{ role_instructions }}"})
    primary = _render_with(config, {"prompt_body": "Body."})
    assert primary.text == "Team primary for Grok.\n\nBody." and primary.template == "primary"
    worker = _render_with(config, {"audience": "subagent", "role_instructions": "review"})
    assert worker.text == "Team worker: review" and worker.template == "subagent"
    # Nothing sealed stays in the compile cache.
    assert not _engine_holds("Team primary", "Team worker")


def test_a_sealed_template_of_ones_own_id_is_chosen_by_the_context(tmp_path):
    config, _ = _sealed_config(tmp_path, {"reviewer": b"Reviewer prompt, tools: ${{ tools.by_kind | length }}."})
    result = _render_with(config, {"system_prompt": {"sealed": "reviewer"}}, {"read": "r"})
    assert result.text == "Reviewer prompt, tools: 1." and result.template == "custom"
    from promptd.errors import InvalidContext

    with pytest.raises(InvalidContext) as caught:
        _render_with(config, {"system_prompt": {"sealed": "nobody"}})
    assert caught.value.data["field"] == "system_prompt.sealed" and caught.value.data["reason"] == "unknown_sealed"


def test_a_file_sealed_under_another_id_is_refused_for_the_slot(tmp_path):
    config, key = _sealed_config(tmp_path, {"primary": b"x"})
    swapped = tmp_path / "swapped.sealed"
    swapped.write_bytes(vault.seal(b"apply patch text", key, "apply_patch"))
    config = config.model_copy(update={"templates": {"primary": str(swapped)}})
    with pytest.raises(VaultLocked) as caught:
        _render_with(config, {})
    assert caught.value.data["reason"] == "wrong_template"


def test_without_sealed_templates_the_shipped_ones_render_inline():
    from promptd.prompt import pipeline

    context = parse_context({})
    render(context, {})
    assert pipeline.renders_inline(context)
    assert not pipeline.renders_inline(context, {"primary": "p.sealed"})


# -- start-up ------------------------------------------------------------------------------------


def test_the_startup_check_reports_metadata_and_refuses_what_a_render_would_refuse(tmp_path):
    config, key = _sealed_config(tmp_path, {"primary": b"x"})
    report = vault.startup_report(config, {})
    assert report == {"key_source": "key_file", "key_where": config.key_file, "templates": ["primary"]}
    assert key.hex() not in json.dumps(report)
    with pytest.raises(VaultLocked):
        vault.startup_report(VaultConfig(key_file=str(tmp_path / "missing.key")), {})
    with pytest.raises(VaultLocked) as caught:
        vault.startup_report(config.model_copy(update={"templates": {"primary": str(tmp_path / "gone.sealed")}}), {})
    assert caught.value.data["reason"] == "missing_file"


def test_the_runtime_refuses_a_missing_key_file_and_logs_the_source_it_uses(tmp_path):
    import io

    from promptd.config import Config
    from promptd.errors import ConfigError
    from promptd.logs import Logger
    from promptd.runtime import Runtime

    with pytest.raises(ConfigError) as caught:
        Runtime(Config(vault=VaultConfig(key_file=str(tmp_path / "missing.key"))))
    assert caught.value.data["field"] == "vault" and str(tmp_path / "missing.key") in caught.value.message
    key = vault.new_key()
    stream = io.StringIO()
    Runtime(Config(vault=VaultConfig(key_file=str(_key_file(tmp_path, key)))), Logger("info", stream))
    record = json.loads(stream.getvalue().splitlines()[-1])
    assert record["event"] == "vault_key" and record["key_source"] == "key_file" and key.hex() not in stream.getvalue()


# -- the command line ------------------------------------------------------------------------------


def test_keygen_creates_missing_folders_private_and_never_prints_a_traceback(tmp_path, cli):
    key = tmp_path / "home" / ".config" / "promptd" / "vault.key"
    result = cli("vault", "keygen", str(key))
    assert result.returncode == 0, result.stderr
    assert (key.stat().st_mode & 0o777) == 0o600
    for folder in (key.parent, key.parent.parent, key.parent.parent.parent):
        assert (folder.stat().st_mode & 0o777) == 0o700
    blocked = tmp_path / "file"
    blocked.write_text("")
    refused = cli("vault", "keygen", str(blocked / "sub" / "vault.key"))
    assert refused.returncode == 2 and b"Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1


def test_seal_compiles_and_lints_first_and_refuses_on_findings(tmp_path, cli):
    key = tmp_path / "vault.key"
    assert cli("vault", "keygen", str(key)).returncode == 0
    unguarded = tmp_path / "unguarded.jinja"
    unguarded.write_text("Read with ${{ tools.by_kind.read }}.\n")
    broken = tmp_path / "broken.jinja"
    broken.write_text("line one\n${% if tools.by_kind.read %}never closed\n")
    for plain, kind in ((unguarded, b"unguarded_tool"), (broken, b"syntax")):
        out = tmp_path / "out.sealed"
        result = cli("vault", "seal", str(plain), "-o", str(out), "--key-file", str(key))
        assert result.returncode == 1 and kind in result.stdout and not out.exists()
        assert plain.read_bytes() not in result.stdout + result.stderr
    sealed = tmp_path / "unguarded.sealed"
    # A file that is already sealed is not sealed again.
    good = tmp_path / "good.jinja"
    good.write_text("${%- if tools.by_kind.read %}Read with ${{ tools.by_kind.read }}.${%- endif %}")
    assert cli("vault", "seal", str(good), "-o", str(sealed), "--key-file", str(key), "--id", "primary").returncode == 0
    again = cli("vault", "seal", str(sealed), "--key-file", str(key))
    assert again.returncode == 2 and b"already sealed" in again.stderr
    assert cli("vault", "seal", str(good), "--id", "no spaces", "--key-file", str(key)).returncode == 2


def test_a_template_reading_a_host_flag_seals_and_verifies_once_the_flag_is_declared(tmp_path, cli):
    key = tmp_path / "vault.key"
    assert cli("vault", "keygen", str(key)).returncode == 0
    plain = tmp_path / "beta.jinja"
    plain.write_text("${% if beta_tools %}Beta tools are on.${% endif %}\n")
    sealed = tmp_path / "beta.sealed"
    undeclared = cli("vault", "seal", str(plain), "-o", str(sealed), "--key-file", str(key), "--id", "primary")
    assert undeclared.returncode == 1 and b"beta_tools" in undeclared.stdout and not sealed.exists()
    declared = cli("vault", "seal", str(plain), "-o", str(sealed), "--key-file", str(key), "--id", "primary", "--flag", "beta_tools")
    assert declared.returncode == 0, declared.stderr
    assert cli("vault", "verify", str(sealed), "--key-file", str(key)).returncode == 1
    assert cli("vault", "verify", str(sealed), "--key-file", str(key), "--flag", "beta_tools").returncode == 0


def test_verify_opens_compiles_and_lints_without_printing_the_plaintext(tmp_path, cli):
    key = tmp_path / "vault.key"
    assert cli("vault", "keygen", str(key)).returncode == 0
    good = tmp_path / "team.jinja"
    good.write_text("Team prompt ${{ os_name }} SECRET-WORDS")
    sealed = tmp_path / "team.sealed"
    assert cli("vault", "seal", str(good), "-o", str(sealed), "--key-file", str(key), "--id", "team").returncode == 0
    ok = cli("vault", "verify", str(sealed), "--key-file", str(key))
    assert ok.returncode == 0 and b"'team'" in ok.stdout and b"SECRET-WORDS" not in ok.stdout + ok.stderr
    assert cli("vault", "verify", str(sealed), "--key-file", str(key), "--id", "primary").returncode == 1
    wrong = cli("vault", "verify", str(sealed), env={vault.KEY_ENV: vault.new_key().hex()})
    assert wrong.returncode == 1 and vault.KEY_ENV.encode() in wrong.stderr and b"vault_locked" in wrong.stderr
    # A file sealed before the lint existed, with an unguarded tool: verify reports it.
    data = vault.seal(b"Use ${{ tools.by_kind.edit }}", bytes.fromhex(key.read_text().strip()), "old")
    old = tmp_path / "old.sealed"
    old.write_bytes(data)
    found = cli("vault", "verify", str(old), "--key-file", str(key))
    assert found.returncode == 1 and b"unguarded_tool" in found.stdout


def test_a_sealed_primary_renders_from_the_cli_and_the_wire(tmp_path, cli, spawn):
    key = tmp_path / "vault.key"
    assert cli("vault", "keygen", str(key)).returncode == 0
    plain = tmp_path / "primary.jinja"
    plain.write_text("Sealed primary for ${{ system_prompt_label }}.")
    sealed = tmp_path / "primary.sealed"
    assert cli("vault", "seal", str(plain), "-o", str(sealed), "--key-file", str(key), "--id", "primary").returncode == 0
    env = {"PROMPTD_VAULT__KEY_FILE": str(key), "PROMPTD_VAULT__TEMPLATES": json.dumps({"primary": str(sealed)})}
    rendered = cli("render", env=env)
    assert rendered.returncode == 0 and rendered.stdout == b"Sealed primary for Grok."
    server = spawn(env=env)
    assert server.call("prompt/render", {"context": {"system_prompt_label": "Atlas"}})["text"] == "Sealed primary for Atlas."
    assert server.call("prompt/render", {"context": {"audience": "subagent"}})["template"] == "subagent"


def test_serve_with_a_missing_key_file_exits_2_with_one_line(tmp_path):
    missing = tmp_path / "nowhere" / "vault.key"
    result = run_cli("serve", env={"PROMPTD_VAULT__KEY_FILE": str(missing)}, stdin=b"")
    lines = result.stderr.decode().strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and str(missing) in lines[0] and "Traceback" not in lines[0]
    unset = run_cli("serve", env={"PROMPTD_VAULT__KEY_SOURCE": "env"}, stdin=b"")
    assert unset.returncode == 2 and vault.KEY_ENV in unset.stderr.decode() and len(unset.stderr.decode().strip().splitlines()) == 1


def test_a_tilde_in_configured_paths_means_the_home_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    key = vault.new_key()
    _key_file(tmp_path, key)
    (tmp_path / "p.sealed").write_bytes(vault.seal(b"Home primary.", key, "primary"))
    config = VaultConfig(key_file="~/vault.key", templates={"primary": "~/p.sealed"})
    assert vault.startup_report(config, {})["templates"] == ["primary"]
    assert _render_with(config, {}).text == "Home primary."


def test_initialize_config_with_a_missing_key_file_is_refused_and_changes_nothing(tmp_path):
    from promptd.local import Local, LocalError

    door = Local()
    with pytest.raises(LocalError) as caught:
        door.call("initialize", {"config": {"vault": {"key_file": str(tmp_path / "missing.key")}}})
    assert caught.value.kind == "invalid_config"
    assert door.runtime.config.vault.key_file is None
    assert "Begin Patch" in door.call("prompt/render", {"context": {"system_prompt": "codex"}, "tools": {"by_kind": {"patch": "apply_patch"}}})["text"]
