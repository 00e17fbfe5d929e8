"""Configuration layering, the CLI, and the generated protocol document."""

from __future__ import annotations

import json

import jsonschema
import pytest
from conftest import ROOT
from generate import GENERATED
from jsonschema_specifications import REGISTRY as SPECS
from referencing import Registry, Resource

from promptd import config as config_module
from promptd.errors import ConfigError


def test_defaults_then_file_then_environment_then_initialize(tmp_path):
    toml = tmp_path / "promptd.toml"
    toml.write_text("[todo_gate]\nenabled = true\nmax_fires_per_prompt = 5\n[reminders]\nbudget_chars = 100\n")
    loaded = config_module.load(toml, {"PROMPTD_TODO_GATE__MAX_FIRES_PER_PROMPT": "7"})
    assert loaded.todo_gate.enabled is True and loaded.todo_gate.max_fires_per_prompt == 7
    assert loaded.reminders.budget_chars == 100 and loaded.reminders.style == "pua"
    merged = loaded.merged({"reminders": {"style": "xml"}})
    assert merged.reminders.style == "xml" and merged.reminders.budget_chars == 100


@pytest.mark.parametrize("env", [{"PROMPTD_REMINDERS__STYLE": "morse"}, {"PROMPTD_TODO_GATE__MAX_FIRES_PER_PROMPT": "-1"}])
def test_bad_settings_from_the_environment_are_refused(env):
    with pytest.raises(ConfigError):
        config_module.load(None, env)


def test_cli_call_prints_the_result_as_json(cli):
    result = cli("call", "reminder/wrap", '{"key": "session.cwd", "body": "/tmp"}')
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"text": '<system-reminder key="session.cwd">\n/tmp\n</system-reminder>'}


def test_cli_call_failure_is_an_input_error_with_the_error_on_stderr(cli):
    result = cli("call", "reminder/wrap", '{"key": "", "body": "x"}')
    assert result.returncode == 2 and result.stdout == b""
    assert json.loads(result.stderr)["error"]["data"]["kind"] == "invalid_key"


def test_cli_call_of_an_unknown_method_is_a_usage_error(cli):
    assert cli("call", "no/such").returncode == 2


def test_version_prints_the_package_version(cli):
    from promptd import __version__

    assert __version__ in cli("version").stdout.decode()


def test_version_option_reads_the_version_file(cli):
    version = (ROOT / "VERSION").read_text().strip()
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.decode().startswith(f"promptd {version} (protocol ")


def test_a_bare_promptd_prints_the_help_and_exits_zero(cli):
    result = cli()
    assert result.returncode == 0 and result.stderr == b""
    help_text = result.stdout.decode()
    for word in ("serve", "call", "exit status", "PROMPTD_CONFIG", "agent.md", "completion"):
        assert word in help_text, word


@pytest.mark.parametrize("command", ["serve", "call"])
def test_command_help_explains_streams_exit_codes_environment_and_docs(command, cli):
    result = cli(command, "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    for word in ("stdout", "stderr", "exit status", "PROMPTD_CONFIG", "PROMPTD_VAULT_KEY", "protocol.md"):
        assert word in text, word


SERVE_LINES = [
    ["serve"],
    ["serve", "--log-level", "debug"],
    ["--log-level", "error", "serve"],
    ["serve", "--config", "a.toml", "--log-level=info"],
    ["--config=serve", "serve"],
    ["--config", "serve", "serve"],
    ["serve", "--config", "serve"],
    ["--log-level", "debug", "serve", "--log-level", "error"],
    ["serve", "--log-level", "loud"],
    ["serve", "--config"],
    ["serve", "--config="],
    ["serve", "--conf", "a.toml"],
    ["serve", "-h"],
    ["serve", "extra"],
    ["call", "reminder/keys"],
    ["--config", "serve"],
    [],
]


@pytest.mark.parametrize("argv", SERVE_LINES, ids=" ".join)
def test_the_serve_shortcut_reads_a_command_line_as_the_full_parser_does_or_leaves_it_to_it(argv):
    from promptd.cli import main as cli
    from promptd.cli import parser as cli_parser

    shortcut = cli.serve_options(argv)
    if shortcut is None:
        return  # the full parser reads it, as it reads every other command line
    full = cli_parser.build_parser().parse_args(argv)
    assert (shortcut.command, shortcut.config, shortcut.log_level) == (full.command, full.config, full.log_level)


def test_the_serve_shortcut_takes_the_command_lines_a_host_spawns():
    from promptd.cli import main as cli

    for argv in (["serve"], ["serve", "--log-level", "debug"], ["--config", "p.toml", "serve"]):
        assert cli.serve_options(argv) is not None, argv


def test_call_reads_params_from_stdin_and_from_a_file(tmp_path, cli):
    params = b'{"key": "session.cwd", "body": "/tmp"}'
    from_stdin = cli("call", "reminder/wrap", "-", stdin=params)
    assert from_stdin.returncode == 0 and "/tmp" in json.loads(from_stdin.stdout)["text"]
    path = tmp_path / "params.json"
    path.write_bytes(params)
    from_file = cli("call", "reminder/wrap", f"@{path}")
    assert from_file.returncode == 0 and json.loads(from_file.stdout) == json.loads(from_stdin.stdout)


@pytest.mark.parametrize("params", ["@/no/such/folder/params.json", "not json", "-"])
def test_call_with_unreadable_or_invalid_params_is_a_usage_error_without_a_traceback(params, cli):
    result = cli("call", "reminder/wrap", params, stdin=b"{oops")
    assert result.returncode == 2 and result.stdout == b""
    assert b"Traceback" not in result.stderr and result.stderr.decode().startswith("promptd call: ")


def test_an_output_file_in_a_missing_folder_is_one_line_and_exit_2(tmp_path, cli):
    target = tmp_path / "no" / "such" / "out.txt"
    result = cli("render", "-o", str(target))
    assert result.returncode == 2 and b"Traceback" not in result.stderr
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("promptd") and str(target) in lines[0]


@pytest.mark.parametrize("relative,produce", [(rel, fn) for files in GENERATED.values() for rel, fn in files.items()])
def test_generated_files_are_current(relative, produce):
    assert (ROOT / relative).read_bytes() == produce(), f"{relative} is stale: run `make protocol docs`"


def test_the_openrpc_document_is_valid_against_the_meta_schema():
    meta = json.loads((ROOT / "protocol" / "meta" / "openrpc-meta-schema.json").read_text("utf-8"))
    draft7 = Resource.from_contents(SPECS.contents("http://json-schema.org/draft-07/schema#"))
    # The meta-schema names the OpenRPC project's JSON Schema dialect by URL; it is draft-07 based.
    registry = Registry().with_resources([("https://meta.json-schema.tools", draft7), ("https://meta.json-schema.tools/", draft7)])
    validator = jsonschema.Draft7Validator(meta, registry=registry)
    document = json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))
    validator.validate(document)
    broken = dict(document, methods=[{"name": 5}])
    assert list(validator.iter_errors(broken))


def test_every_method_in_the_table_is_in_the_document_and_in_initialize():
    from conftest import call_in_process

    from promptd.methods import TABLE

    document = json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))
    assert {m["name"] for m in document["methods"]} == set(TABLE)
    assert set(call_in_process("initialize", {})["methods"]) == set(TABLE)


MERGES = [
    {},
    {"log_level": "debug"},
    {"log_level": "loud"},
    {"max_message_bytes": 10},
    {"no_such_setting": 1},
    {"reminders": {"style": "xml"}},
    {"reminders": {"budget_chars": 0}},
    {"reminders": {"nope": 1}},
    {"reminders": 5},
    {"reminders": None},
    {"todo_gate": {"enabled": True}, "shutdown_deadline_ms": 0, "sessions": {"max_sessions": 2}},
    {"vault": {"templates": {"bad id!": "x"}}},
    {"keys": {"extra": [{"key": "host.a", "purpose": "p"}]}},
]


@pytest.mark.parametrize("overrides", MERGES, ids=lambda o: json.dumps(o))
def test_merging_validates_only_what_is_given_with_the_result_and_error_of_a_whole_validation(overrides):
    base = config_module.Config().merged({"reminders": {"budget_chars": 77}, "log_level": "warning"})
    whole_data = {**base.model_dump()}
    for name, value in overrides.items():
        whole_data[name] = {**whole_data[name], **value} if isinstance(value, dict) and isinstance(whole_data.get(name), dict) else value
    try:
        expected = config_module.Config.model_validate(whole_data)
    except Exception as exc:  # the whole validation's first error, as a location
        expected_error = exc.errors()[0]["loc"]
        with pytest.raises(ConfigError) as raised:
            base.merged(overrides)
        assert raised.value.data["field"] == ".".join(map(str, expected_error))
        return
    assert base.merged(overrides).model_dump() == expected.model_dump()


def test_initialize_config_with_an_invalid_declared_provider_changes_nothing():
    from promptd.runtime import Runtime

    runtime = Runtime(config_module.load(None, {}))
    before = runtime.config
    bad = {"reminders": {"budget_chars": 123, "providers": [{"name": "x", "kind": "file", "key": "k"}]}}
    with pytest.raises(ConfigError):
        runtime.apply_config(bad)
    assert runtime.config is before and runtime.providers.entries()
