"""prompt/render, prompt/lint and prompt/persist in-process and over the wire,
and the CLI commands render, lint and vault."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from conftest import call_in_process

from promptd.config import Config
from promptd.methods.boundary import RpcFailure
from promptd.prompt import vault
from promptd.runtime import Runtime

TOOLS = {"by_kind": {"read": "read_file", "execute": "run_terminal_command"}}
MARKER = "a coding agent that changes files by writing patches"


def failure(method, params, runtime=None):
    with pytest.raises(RpcFailure) as caught:
        call_in_process(method, params, runtime)
    return caught.value.code, caught.value.data["kind"], caught.value.data


# -- in-process ----------------------------------------------------------------------------------


def test_render_returns_text_template_sha256_and_length():
    result = call_in_process("prompt/render", {"context": {"audience": "subagent"}, "tools": TOOLS})
    assert result["template"] == "subagent"
    assert "`read_file`" in result["text"]
    assert result["sha256"] == hashlib.sha256(result["text"].encode()).hexdigest()
    assert result["chars"] == len(result["text"])


def test_render_without_tools_uses_the_default_set_from_initialize():
    runtime = Runtime(Config())
    call_in_process("initialize", {"tools": {"by_kind": {"read": "host_reader"}}}, runtime)
    assert "`host_reader`" in call_in_process("prompt/render", {}, runtime)["text"]
    assert "`host_reader`" not in call_in_process("prompt/render", {"tools": {"by_kind": {}}}, runtime)["text"]


def test_render_of_the_codex_override_opens_the_vault():
    result = call_in_process("prompt/render", {"context": {"system_prompt": "codex"}})
    assert result["template"] == "apply_patch" and MARKER in result["text"]


@pytest.mark.parametrize(
    ("context", "field"),
    [({"version": 2}, "version"), ({"audiense": "primary"}, "audiense"), ({"system_prompt": "codec"}, "system_prompt"), ({"prompt_mode": "full"}, "prompt_body")],
)
def test_render_of_a_bad_context_is_invalid_context_naming_the_field(context, field):
    code, kind, data = failure("prompt/render", {"context": context})
    assert (code, kind, data["field"]) == (-32023, "invalid_context", field)


def test_render_errors_name_template_and_line():
    code, kind, data = failure("prompt/render", {"context": {"system_prompt": {"custom": "a\nb ${% for %}"}}})
    assert (code, kind, data["template"], data["line"]) == (-32020, "template_syntax", "custom", 2)
    code, kind, data = failure("prompt/render", {"context": {"prompt_body": "x\n\n${{ ''.__class__ }}"}})
    assert (code, kind, data["template"], data["line"]) == (-32021, "template_render", "body", 3)


def test_other_bad_params_are_invalid_params():
    code, kind, _ = failure("prompt/render", {"flags": {"x": "maybe"}})
    assert (code, kind) == (-32602, "invalid_params")
    code, kind, _ = failure("prompt/render", {"tools": {"read": "r"}})
    assert (code, kind) == (-32602, "invalid_params")


def test_a_flag_hiding_a_variable_is_invalid_context():
    code, kind, data = failure("prompt/render", {"flags": {"os_name": True}})
    assert (code, kind, data["field"]) == (-32023, "invalid_context", "flags.os_name")


def test_render_with_a_wrong_vault_key_is_vault_locked(monkeypatch):
    monkeypatch.setenv(vault.KEY_ENV, vault.new_key().hex())
    code, kind, _ = failure("prompt/render", {"context": {"system_prompt": "codex"}})
    assert (code, kind) == (-32030, "vault_locked")


def test_lint_uses_the_configured_exemptions_unless_the_caller_gives_its_own():
    template = "${{ tools.by_kind.search }} ${{ tools.by_kind.read }}"
    # No kind is exempt by default: an unguarded search tool is a finding like any other.
    default = call_in_process("prompt/lint", {"template": template})["violations"]
    assert [(v["line"], v["column"], v["kind"]) for v in default] == [(1, 5, "unguarded_tool"), (1, 33, "unguarded_tool")]
    assert len(call_in_process("prompt/lint", {"template": template, "exempt_kinds": ["search"]})["violations"]) == 1
    runtime = Runtime(Config().merged({"prompt": {"exempt_kinds": ["read", "search"]}}))
    assert call_in_process("prompt/lint", {"template": template}, runtime)["violations"] == []


def test_persist_normalizes_and_clears_subagent_role_summaries():
    result = call_in_process("prompt/persist", {"context": {"audience": "Subagent", "role_summaries": ["a"]}})
    assert result["context"]["audience"] == "subagent" and result["context"]["role_summaries"] == []
    assert result["context"]["version"] == 1 and result["context"]["system_prompt"] == "none"
    again = call_in_process("prompt/persist", {"context": result["context"]})
    assert again == result


# -- over the wire -------------------------------------------------------------------------------


def test_render_lint_and_persist_over_the_wire(served):
    served.call("initialize", {"tools": TOOLS})
    primary = served.call("prompt/render", {"context": {"working_directory": "/srv/app", "os_name": "linux"}})
    assert primary["template"] == "primary" and "Operating system: linux" in primary["text"] and "`run_terminal_command`" in primary["text"]
    # The working directory reaches the model as a session.cwd reminder, not in the system prompt.
    assert "/srv/app" not in primary["text"] and primary["stable_prefix_chars"] == primary["chars"]
    again = served.call("prompt/render", {"context": {"working_directory": "/srv/other", "current_date": "2026-12-02", "os_name": "linux"}})
    assert again == primary  # the same bytes in another folder on another day: a cacheable prefix
    codex = served.call("prompt/render", {"context": {"system_prompt": "codex", "is_non_interactive": True}})
    assert codex["template"] == "apply_patch" and MARKER in codex["text"]
    full = served.call("prompt/render", {"context": {"prompt_mode": "full", "prompt_body": "Only ${{ os_name }}.", "os_name": "linux"}})
    assert full == {"text": "Only linux.", "template": "full", "sha256": hashlib.sha256(b"Only linux.").hexdigest(), "chars": 11, "stable_prefix_chars": 11, "prefix_change": None}
    lint = served.call("prompt/lint", {"template": "${{ tools.by_kind.web }}"})
    assert lint["violations"][0]["kind"] == "unguarded_tool"
    assert served.call("prompt/persist", {"context": {"audience": "subagent", "role_summaries": ["x"]}})["context"]["role_summaries"] == []


def test_errors_over_the_wire_carry_code_kind_and_field(shared_served):
    reply = shared_served.request("prompt/render", {"context": {"version": 3}})
    assert reply["error"]["code"] == -32023 and reply["error"]["data"]["kind"] == "invalid_context" and reply["error"]["data"]["field"] == "version"
    reply = shared_served.request("prompt/render", {"context": {"system_prompt": {"custom": "${{ self.__init__ }}"}}})
    assert reply["error"]["code"] == -32021 and reply["error"]["data"]["kind"] == "template_render"
    reply = shared_served.request("prompt/render", {"context": {"system_prompt": {"custom": "${% if %}"}}})
    assert reply["error"]["code"] == -32020 and reply["error"]["data"]["kind"] == "template_syntax"
    assert shared_served.call("prompt/render", {})["template"] == "primary"  # still serving


@pytest.mark.serial
@pytest.mark.parametrize(
    "custom",
    ["${{ ((((9**64)**64)**64)**64) }}", '${{ "%0300000000d"|format(1) }}', '${{ "x".ljust(300000000) }}'],
)
def test_a_template_building_a_huge_value_is_refused_at_once_and_the_server_keeps_serving(shared_served, custom):
    started = time.perf_counter()
    reply = shared_served.request("prompt/render", {"context": {"system_prompt": {"custom": custom}}})
    assert time.perf_counter() - started < 2.0
    assert reply["error"]["code"] == -32021 and reply["error"]["data"]["kind"] == "template_render" and reply["error"]["data"]["error"] == "security"
    assert shared_served.call("prompt/render", {})["template"] == "primary"


def test_a_wrong_vault_key_over_the_wire_is_vault_locked(spawn, monkeypatch):
    monkeypatch.setenv(vault.KEY_ENV, vault.new_key().hex())  # read from promptd's environment
    server = spawn()
    reply = server.request("prompt/render", {"context": {"system_prompt": "codex"}})
    assert reply["error"]["code"] == -32030 and reply["error"]["data"]["kind"] == "vault_locked"


def test_logs_never_carry_the_prompt_text(spawn):
    server = spawn(env={"PROMPTD_LOG_LEVEL": "debug"})
    server.call("prompt/render", {"context": {"system_prompt": "codex", "role_instructions": "UNIQUE-ROLE-TEXT"}})
    server.call("prompt/render", {"context": {"role_instructions": "UNIQUE-ROLE-TEXT"}})
    server.close()
    logs = server.stderr_text()
    assert "prompt_rendered" in logs
    assert "UNIQUE-ROLE-TEXT" not in logs and MARKER not in logs and "Begin Patch" not in logs


# -- the CLI -------------------------------------------------------------------------------------


def test_cli_render_prints_exactly_the_text_the_method_returns(tmp_path, cli):
    context = tmp_path / "ctx.yaml"
    context.write_text("audience: subagent\nos_name: linux\n")
    result = cli("render", "--context", str(context), "--tool", "read=read_file")
    assert result.returncode == 0, result.stderr
    expected = call_in_process("prompt/render", {"context": {"audience": "subagent", "os_name": "linux"}, "tools": {"by_kind": {"read": "read_file"}}})
    assert result.stdout == expected["text"].encode()
    assert hashlib.sha256(result.stdout).hexdigest() == expected["sha256"]


def test_cli_render_takes_a_body_an_override_flags_and_json_output(tmp_path, cli):
    body = tmp_path / "body.txt"
    body.write_text("Body ${{ tools.by_kind.read }} ${{ params.edit.old_string }}")
    custom = tmp_path / "custom.txt"
    custom.write_text("Base${% if windows_host %} on Windows${% endif %}")
    result = cli("render", "--body", str(body), "--override", f"custom:{custom}", "--tool", "read=cat", "--param", "edit.old_string=old", "--flag", "windows_host", "--json")
    assert result.returncode == 0, result.stderr
    parsed = json.loads(result.stdout)
    assert parsed["text"] == "Base on Windows\n\nBody cat old" and parsed["template"] == "custom"
    codex = cli("render", "--override", "codex")
    assert codex.returncode == 0 and MARKER.encode() in codex.stdout


def test_cli_render_of_a_bad_context_fails_with_the_field_named(tmp_path, cli):
    context = tmp_path / "ctx.json"
    context.write_text('{"version": 1, "shel_path": "/bin/sh"}')
    result = cli("render", "--context", str(context))
    # An input error: exit 2, the field named, and what it probably was.
    assert result.returncode == 2 and b"shel_path" in result.stderr and b"invalid_context" in result.stderr
    assert b"did you mean `shell_path`?" in result.stderr
    assert cli("render", "--override", "sideways").returncode == 2


def test_cli_lint_reports_file_line_and_column_and_fails(tmp_path, cli):
    good = tmp_path / "good.jinja"
    good.write_text("${% if tools.by_kind.read %}${{ tools.by_kind.read }}${% endif %}")
    bad = tmp_path / "bad.jinja"
    bad.write_text("ok\n  ${{ tools.by_kind.edit }}\n")
    assert cli("lint", str(good)).returncode == 0
    result = cli("lint", str(good), str(bad))
    assert result.returncode == 1
    assert result.stdout.decode().strip() == f"{bad}:2:7: unguarded_tool: `tools.by_kind.edit` is output outside `${{% if tools.by_kind.edit %}}`"
    search = tmp_path / "search.jinja"
    search.write_text("${{ tools.by_kind.search }}")
    assert cli("lint", str(search)).returncode == 1
    assert cli("lint", "--exempt", "search", str(search)).returncode == 0


def test_cli_render_runs_the_method_handler_the_server_runs(cli):
    # The handler logs each render (metadata only) at debug level: the CLI goes through it.
    result = cli("render", "--tool", "read=cat", env={"PROMPTD_LOG_LEVEL": "debug"})
    assert result.returncode == 0
    events = [json.loads(line) for line in result.stderr.decode().splitlines() if line.startswith("{")]
    assert [(e["template"], e["tool_kinds"]) for e in events if e["event"] == "prompt_rendered"] == [("primary", 1)]


def test_cli_failures_carry_the_kind_and_field_the_wire_sends(tmp_path, cli):
    context = tmp_path / "ctx.json"
    context.write_text('{"memory_enabled": "yes"}')
    code, kind, data = failure("prompt/render", {"context": {"memory_enabled": "yes"}})
    result = cli("render", "--context", str(context))
    assert result.returncode == 2
    assert result.stderr.decode().rstrip().endswith(f"[field {data['field']}] ({kind})")


def test_the_prompt_commands_live_in_the_entry_layer_not_in_the_domain_package():
    import importlib.util

    assert importlib.util.find_spec("promptd.prompt.commands") is None
    assert importlib.util.find_spec("promptd.cli.prompt") is not None


def test_cli_lint_passes_the_shipped_templates(cli):
    templates = vault.TEMPLATES
    assert cli("lint", "--strict", str(templates / "primary.jinja"), str(templates / "subagent.jinja"), str(templates / "unsealed" / "apply_patch.jinja")).returncode == 0


def test_cli_vault_keygen_seal_and_open_round_trip(tmp_path, cli):
    key = tmp_path / "vault.key"
    assert cli("vault", "keygen", str(key)).returncode == 0
    assert (key.stat().st_mode & 0o777) == 0o600
    assert cli("vault", "keygen", str(key)).returncode == 2  # never overwrites a key
    plain = tmp_path / "mine.jinja"
    plain.write_text("Patch carefully, ${{ system_prompt_label }}.")
    sealed = tmp_path / "mine.sealed"
    assert cli("vault", "seal", str(plain), "-o", str(sealed), "--key-file", str(key)).returncode == 0
    assert b"Patch carefully" not in sealed.read_bytes()
    opened = cli("vault", "open", str(sealed), "--key-file", str(key))
    assert opened.returncode == 0 and opened.stdout == plain.read_bytes()
    wrong = cli("vault", "open", str(sealed))
    assert wrong.returncode == 1 and b"vault_locked" in wrong.stderr
    out = tmp_path / "out.jinja"
    assert cli("vault", "open", str(sealed), "-o", str(out), env={vault.KEY_ENV: key.read_text().strip()}).returncode == 0
    assert out.read_bytes() == plain.read_bytes() and (out.stat().st_mode & 0o777) == 0o600
    # The sealed file is then used through config for the codex override.
    rendered = cli("render", "--override", "codex", env={"PROMPTD_VAULT__KEY_FILE": str(key), "PROMPTD_VAULT__TEMPLATE_FILE": str(sealed)})
    assert rendered.returncode == 0 and rendered.stdout == b"Patch carefully, Grok."


def test_cli_vault_seal_with_the_default_key_warns_that_it_is_obfuscation(tmp_path, cli):
    plain = tmp_path / "p.jinja"
    plain.write_text("x")
    result = cli("vault", "seal", str(plain))
    assert result.returncode == 0 and b"obfuscation" in result.stderr and b'"ciphertext"' in result.stdout


def test_cli_vault_open_refuses_a_key_file_others_can_read(tmp_path, cli):
    key = tmp_path / "k"
    key.write_text(vault.new_key().hex())
    key.chmod(0o644)
    result = cli("vault", "open", "--key-file", str(key))
    assert result.returncode == 1 and b"vault_locked" in result.stderr


def test_cli_vault_open_shows_the_shipped_template_with_the_default_key(cli):
    result = cli("vault", "open")
    assert result.returncode == 0 and result.stdout == (vault.TEMPLATES / "unsealed" / "apply_patch.jinja").read_bytes()
